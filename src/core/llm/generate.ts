/**
 * Sampling from an HfCausalLM with a key/value cache — on its tfjs variables (generateLlm) or on any engine behind
 * `LlmIncremental` (generateLlmWith: the onnxruntime export uses it).
 *
 * Batch layout (as the lab's own engines, src/core/agent/engine.ts): prompts are left-padded to the longest, each row
 * gets position ids counting its real tokens, and an additive bias hides pad keys and future keys. The prompt is run
 * once (prefill), then one column per step against the cache. Finished rows receive the pad id (ignored) until all
 * rows stop.
 *
 * The loop is the lab's own engines' (src/core/agent/engine.ts decodeBatch): tokens drawn by the shared
 * `sampleToken` (temperature, top-k, top-p; one `rng.float()` per sampled token, rows in order), so a run is a
 * function of its seed. A row stops after a stop id (EOS), when its decoded tail contains a stop string (e.g.
 * `</action>`, which real BPE vocabularies split into several tokens), or at maxNewTokens.
 */
import * as tf from '@tensorflow/tfjs';
import type { Rng } from '../util/rng';
import { decodeBatch } from '../agent/engine';
import { validateSampling } from '../agent/sampling';
import type { KvEntry } from './attention';
import type { HfCausalLM } from './causalLm';

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

/**
 * What the sampling loop needs of an engine: append S columns to every row and return the last column's logits
 * [B·V]. The tfjs model (below) and the onnxruntime export (src/main/compute/ortLlmEngine.ts) both implement it, so
 * their sampling, stop rules and Rng use are one code path and differ only by the logits' float rounding.
 */
export interface LlmIncremental {
  readonly vocabSize: number;
  readonly maxPositions: number;
  /** Start a batch of `batch` rows (drops earlier state). */
  begin(batch: number): void;
  /** ids / positions [B·S], bias [B·S·(P+S)] over the P earlier columns and the S new ones. */
  append(ids: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array>;
  /** Release the cache (also after an error). */
  end(): void;
}

/** HfCausalLM.step with its tfjs key/value cache. */
class TfjsLlmIncremental implements LlmIncremental {
  private cache: KvEntry[] | null = null;
  private B = 0;

  constructor(private readonly model: HfCausalLM) {}

  get vocabSize(): number {
    return this.model.config.vocabSize;
  }

  get maxPositions(): number {
    return this.model.config.maxPositionEmbeddings;
  }

  begin(batch: number): void {
    this.end();
    this.B = batch;
  }

  async append(ids: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array> {
    const out = this.model.step(ids, positions, bias, this.B, S, this.cache);
    this.swap(out.present);
    const logits = (await out.logits.data()) as Float32Array;
    out.logits.dispose();
    return logits;
  }

  private swap(next: KvEntry[] | null): void {
    if (this.cache) for (const e of this.cache) tf.dispose([e.k, e.v]);
    this.cache = next;
  }

  end(): void {
    this.swap(null);
  }
}

export function generateLlm(
  model: HfCausalLM,
  prompts: readonly (readonly number[])[],
  opts: LlmSamplingOptions,
  rng: Rng,
  padId = 0,
): Promise<LlmGenerateResult> {
  return generateLlmWith(new TfjsLlmIncremental(model), prompts, opts, rng, padId);
}

/** The sampling loop over any LlmIncremental (see the file comment). */
export async function generateLlmWith(
  lm: LlmIncremental,
  prompts: readonly (readonly number[])[],
  opts: LlmSamplingOptions,
  rng: Rng,
  padId = 0,
): Promise<LlmGenerateResult> {
  validateSampling(opts);
  if (opts.stopStrings?.length && !opts.decode) throw new Error('generate: stopStrings need a decode function (the tokenizer)');
  const B = prompts.length;
  if (B === 0) return { tokens: [], logProbs: [], finish: [] };
  for (let i = 0; i < B; i++) {
    if (prompts[i].length < 1) throw new Error(`generate: prompt ${i} is empty`);
    if (prompts[i].length + opts.maxNewTokens > lm.maxPositions) {
      throw new Error(
        `generate: prompt ${i} has ${prompts[i].length} tokens; with maxNewTokens ${opts.maxNewTokens} it exceeds max_position_embeddings ${lm.maxPositions}`,
      );
    }
  }
  return decodeBatch(lm, lm.vocabSize, prompts, opts, rng, padId, (ids) => hitsStopString(ids, opts));
}

function hitsStopString(ids: readonly number[], opts: LlmSamplingOptions): boolean {
  if (!opts.stopStrings?.length || !opts.decode) return false;
  const text = opts.decode(ids.slice(-STOP_TAIL));
  return opts.stopStrings.some((s) => text.includes(s));
}
