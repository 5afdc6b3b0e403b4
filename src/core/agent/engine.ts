/**
 * Rollout engines: one interface, two implementations — onnxruntime-node with a KV cache (src/main/compute,
 * injected, since core cannot import Node add-ons) and tfjs (here; fallback and test oracle).
 *
 * Both drive the same generation loop (`generateIncremental`) over an `IncrementalLM`, so sampling, stop rules
 * and Rng consumption are identical by construction; only the logits can differ, by float rounding. The Hugging
 * Face models' sampler (src/core/llm/generate.ts) runs the same loop (decodeBatch) over its own engines.
 *
 * Batch layout: prompts are left-padded to the longest prompt so every row's next token is in the same column.
 * Each row gets explicit position ids (0 at its first real token) and an additive attention bias that hides pad
 * keys and future keys. Rows that finished keep receiving <pad> (their outputs are ignored) until all rows stop.
 */
import type { Rng } from '../util/rng';
import type { LogProbRow, ModelConfig, ModelWeights } from './model';
import { sampleToken, validateSampling, type SamplingOptions } from './sampling';

export type { SamplingOptions } from './sampling';

export interface GenerateResult {
  /** Generated ids per row (stop token included when one was hit). */
  tokens: number[][];
  /** Behaviour log-prob of each generated token (see sampling.ts for the exact definition). */
  logProbs: number[][];
  /** Why each row ended. */
  finish: Array<'stop' | 'length'>;
}

export interface RolloutEngine {
  /** e.g. `onnxruntime-cpu` or `tfjs-wasm`. */
  readonly name: string;
  /** Load the policy's current weights (call after every optimiser step that should affect sampling). */
  setWeights(weights: ModelWeights): Promise<void>;
  /** Sample continuations of each prompt (token ids, normally starting with <bos>). */
  generate(prompts: readonly (readonly number[])[], opts: SamplingOptions, rng: Rng): Promise<GenerateResult>;
  /** Forward-only per-token log-probs of each row's response (old/ref log-probs, mismatch checks). */
  logProbs(rows: readonly LogProbRow[], temperature?: number): Promise<number[][]>;
  dispose(): Promise<void>;
}

/**
 * The one operation an engine must provide for generation: append S columns to every row of a batch and return the
 * logits of the last appended column. The engine keeps whatever state it needs (KV cache, or the whole prefix).
 */
export interface IncrementalLM {
  readonly config: ModelConfig;
  /** Start a new batch of `batch` rows (drops any previous state). */
  begin(batch: number): void;
  /**
   * tokens/positions: [B·S] row-major. bias: [B·S·(P+S)] additive attention bias (P = columns appended so far).
   * Returns logits [B·V] of the last appended column.
   */
  append(tokens: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array>;
  end(): void;
}

const NEG = -1e9;

/** The shared generation loop. */
export async function generateIncremental(
  lm: IncrementalLM,
  prompts: readonly (readonly number[])[],
  opts: SamplingOptions,
  rng: Rng,
  padId = 0,
): Promise<GenerateResult> {
  validateSampling(opts);
  const B = prompts.length;
  if (B === 0) return { tokens: [], logProbs: [], finish: [] };
  const V = lm.config.vocabSize;
  for (let i = 0; i < B; i++) {
    const len = prompts[i].length;
    if (len < 1) throw new Error(`generate: prompt ${i} is empty (it needs at least <bos>)`);
    if (len + opts.maxNewTokens > lm.config.maxSeqLen) {
      throw new Error(
        `generate: prompt ${i} has ${len} tokens; with maxNewTokens ${opts.maxNewTokens} it exceeds maxSeqLen ${lm.config.maxSeqLen} — truncate the prompt`,
      );
    }
    for (const t of prompts[i]) if (!(t >= 0 && t < V)) throw new Error(`generate: prompt ${i} has token id ${t} outside [0, ${V})`);
  }
  return decodeBatch(lm, V, prompts, opts, rng, padId);
}

/**
 * The decoding loop of both samplers — generateIncremental here and llm/generate.ts's generateLlmWith — on prompts
 * their caller has checked: one prefill of the left-padded prompts, then one column per step against the engine's
 * state. A row ends after a stop id, when `stopsAt` says the tokens it generated end it (an LLM's stop strings), or
 * at maxNewTokens; one sampleToken (one rng.float() unless greedy) per live row and step, rows in order.
 */
export async function decodeBatch(
  lm: Pick<IncrementalLM, 'begin' | 'append' | 'end'>,
  V: number,
  prompts: readonly (readonly number[])[],
  opts: SamplingOptions,
  rng: Rng,
  padId: number,
  stopsAt?: (tokens: readonly number[]) => boolean,
): Promise<GenerateResult> {
  const B = prompts.length;
  const Lp = Math.max(...prompts.map((p) => p.length));
  const stop = new Set(opts.stopIds);
  // Column c of row i holds a real token iff c >= pad[i].
  const pad = prompts.map((p) => Lp - p.length);
  const total = Lp + opts.maxNewTokens;
  const valid = new Uint8Array(B * total);
  const tokens: number[][] = prompts.map(() => []);
  const logProbs: number[][] = prompts.map(() => []);
  const finish: Array<'stop' | 'length'> = prompts.map(() => 'length');
  const done = new Uint8Array(B);
  const scratch = { probs: new Float64Array(V), order: new Int32Array(V) };

  lm.begin(B);
  try {
    // Prefill: all prompt columns at once.
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
    let logits = await lm.append(tok, pos, buildBias(valid, B, total, 0, Lp), Lp);
    for (let step = 0; ; step++) {
      const next = new Int32Array(B);
      const nextPos = new Int32Array(B);
      for (let i = 0; i < B; i++) {
        if (done[i]) {
          next[i] = padId;
          continue;
        }
        const { token, logProb } = sampleToken(logits, i * V, V, opts, rng, scratch);
        tokens[i].push(token);
        logProbs[i].push(logProb);
        next[i] = token;
        nextPos[i] = prompts[i].length + step;
        if (stop.has(token) || stopsAt?.(tokens[i])) {
          done[i] = 1;
          finish[i] = 'stop';
        } else if (tokens[i].length >= opts.maxNewTokens) done[i] = 1;
      }
      if (done.every((d) => d === 1)) break;
      const col = Lp + step;
      for (let i = 0; i < B; i++) valid[i * total + col] = done[i] && tokens[i].length <= step ? 0 : 1;
      logits = await lm.append(next, nextPos, buildBias(valid, B, total, col, 1), 1);
    }
  } finally {
    lm.end();
  }
  return { tokens, logProbs, finish };
}

/** Additive bias [B, S, P+S] for queries at columns P..P+S-1 over keys 0..P+S-1 (causal ∧ key is real). */
export function buildBias(valid: Uint8Array, B: number, stride: number, P: number, S: number): Float32Array {
  const K = P + S;
  // A new Float32Array is all +0 (visible): only the hidden keys are written. At each decoding step (S = 1) the
  // keys 0..P are all causal, so a row's pass is a scan of its valid flags that writes only its pads and stopped
  // columns — this ran once per token over every row and key, 0.7 of a 10-step ladder run's ~60 CPU s.
  const out = new Float32Array(B * S * K);
  for (let i = 0; i < B; i++) {
    const row = i * stride;
    for (let s = 0; s < S; s++) {
      const base = (i * S + s) * K;
      const q = P + s;
      for (let k = 0; k <= q; k++) if (!valid[row + k]) out[base + k] = NEG;
      for (let k = q + 1; k < K; k++) out[base + k] = NEG;
    }
  }
  return out;
}

/**
 * Builds a rollout engine loaded with `weights` (injected into the trainer from src/main/compute). `role`
 * 'reference' asks for the frozen π_ref engine, which keeps the trainer's float32 numerics whatever
 * compute.rolloutPrecision says (the KL term compares two trainer-side policies, as verl's ref worker does);
 * every other engine (the sampler, a lagged sampler, π_old on onnxruntime) is a 'rollout' engine.
 */
export type RolloutEngineFactory = (weights: ModelWeights, role?: 'rollout' | 'reference') => Promise<RolloutEngine>;
