/**
 * Sampling from an HfCausalLM with a key/value cache.
 *
 * Batch layout (as the lab's own engines, src/core/agent/engine.ts): prompts are left-padded to the longest, each row
 * gets position ids counting its real tokens, and an additive bias hides pad keys and future keys. The prompt is run
 * once (prefill), then one column per step against the cache. Finished rows receive the pad id (ignored) until all
 * rows stop.
 *
 * Tokens are drawn by the lab's shared `sampleToken` (temperature, top-k, top-p; one `rng.float()` per sampled
 * token, rows in order), so a run is a function of its seed. A row stops after a stop id (EOS), when its decoded
 * tail contains a stop string (e.g. `</action>`, which real BPE vocabularies split into several tokens), or at
 * maxNewTokens.
 */
import * as tf from '@tensorflow/tfjs';
import type { Rng } from '../util/rng';
import { sampleToken, validateSampling } from '../agent/sampling';
import type { KvEntry } from './attention';
import { causalBias, type HfCausalLM } from './causalLm';

export interface LlmSamplingOptions {
  maxNewTokens: number;
  /** 0 = greedy. */
  temperature: number;
  /** (0, 1]; 1 = off. */
  topP: number;
  /** 0 = off. */
  topK: number;
  /** Generation of a row ends right after one of these ids (included in the output): EOS, <|im_end|>, … */
  stopIds: readonly number[];
  /** …or once the decoded output contains one of these strings (needs `decode`). */
  stopStrings?: readonly string[];
  /** Token ids → text (the tokenizer's decode), for stop strings. */
  decode?: (ids: number[]) => string;
}

export interface LlmGenerateResult {
  tokens: number[][];
  /** Behaviour log-prob of each sampled token (log softmax(logits / temperature) over the full vocabulary). */
  logProbs: number[][];
  finish: Array<'stop' | 'length'>;
}

/** Decoded tail length checked for stop strings: enough tokens to cover the longest stop string plus a merge. */
const STOP_TAIL = 24;

export async function generateLlm(
  model: HfCausalLM,
  prompts: readonly (readonly number[])[],
  opts: LlmSamplingOptions,
  rng: Rng,
  padId = 0,
): Promise<LlmGenerateResult> {
  validateSampling(opts);
  if (opts.stopStrings?.length && !opts.decode) throw new Error('generate: stopStrings need a decode function (the tokenizer)');
  const B = prompts.length;
  if (B === 0) return { tokens: [], logProbs: [], finish: [] };
  const V = model.config.vocabSize;
  const Lp = Math.max(...prompts.map((p) => p.length));
  for (let i = 0; i < B; i++) {
    if (prompts[i].length < 1) throw new Error(`generate: prompt ${i} is empty`);
    if (prompts[i].length + opts.maxNewTokens > model.config.maxPositionEmbeddings) {
      throw new Error(
        `generate: prompt ${i} has ${prompts[i].length} tokens; with maxNewTokens ${opts.maxNewTokens} it exceeds max_position_embeddings ${model.config.maxPositionEmbeddings}`,
      );
    }
  }
  const stop = new Set(opts.stopIds);
  const pad = prompts.map((p) => Lp - p.length);
  const total = Lp + opts.maxNewTokens;
  const valid = new Uint8Array(B * total);
  const tokens: number[][] = prompts.map(() => []);
  const logProbs: number[][] = prompts.map(() => []);
  const finish: Array<'stop' | 'length'> = prompts.map(() => 'length');
  const done = new Uint8Array(B);
  const scratch = { probs: new Float64Array(V), order: new Int32Array(V) };
  let cache: KvEntry[] | null = null;
  const swap = (next: KvEntry[]): void => {
    if (cache) for (const e of cache) tf.dispose([e.k, e.v]);
    cache = next;
  };
  try {
    const tok = new Int32Array(B * Lp);
    const pos = new Int32Array(B * Lp);
    for (let i = 0; i < B; i++) {
      for (let c = 0; c < Lp; c++) {
        const real = c >= pad[i];
        tok[i * Lp + c] = real ? prompts[i][c - pad[i]] : padId;
        pos[i * Lp + c] = real ? c - pad[i] : 0;
        valid[i * total + c] = real ? 1 : 0;
      }
    }
    let out = model.step(tok, pos, causalBias(valid, B, total, 0, Lp), B, Lp, null);
    swap(out.present);
    for (let step = 0; ; step++) {
      const logits = (await out.logits.data()) as Float32Array;
      out.logits.dispose();
      const next = new Int32Array(B);
      const nextPos = new Int32Array(B);
      for (let i = 0; i < B; i++) {
        if (done[i]) {
          next[i] = padId;
          continue;
        }
        const s = sampleToken(logits, i * V, V, opts, rng, scratch);
        tokens[i].push(s.token);
        logProbs[i].push(s.logProb);
        next[i] = s.token;
        nextPos[i] = prompts[i].length + step;
        if (stop.has(s.token) || hitsStopString(tokens[i], opts)) {
          done[i] = 1;
          finish[i] = 'stop';
        } else if (tokens[i].length >= opts.maxNewTokens) done[i] = 1;
      }
      if (done.every((d) => d === 1)) break;
      const col = Lp + step;
      for (let i = 0; i < B; i++) valid[i * total + col] = done[i] && tokens[i].length <= step ? 0 : 1;
      out = model.step(next, nextPos, causalBias(valid, B, total, col, 1), B, 1, cache);
      swap(out.present);
    }
  } finally {
    swap([]);
  }
  return { tokens, logProbs, finish };
}

function hitsStopString(ids: number[], opts: LlmSamplingOptions): boolean {
  if (!opts.stopStrings?.length || !opts.decode) return false;
  const text = opts.decode(ids.slice(-STOP_TAIL));
  return opts.stopStrings.some((s) => text.includes(s));
}
