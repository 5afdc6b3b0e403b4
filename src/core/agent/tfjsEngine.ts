/**
 * The tfjs rollout engine: fallback when onnxruntime-node is unavailable, and the oracle the ONNX export is tested
 * against. Two ways to generate: with a KV cache (default; one incremental step per token) or by recomputing the
 * whole prefix for every token (`kvCache: false`; simple and obviously correct — the oracle).
 */
import * as tf from '@tensorflow/tfjs';
import type { Rng } from '../util/rng';
import { generateIncremental, type GenerateResult, type IncrementalLM, type RolloutEngine } from './engine';
import { PolicyModel, type LogProbRow, type ModelConfig, type ModelWeights } from './model';
import type { SamplingOptions } from './sampling';

const NEG = -1e9;

/** Full-recompute IncrementalLM over a tfjs PolicyModel. */
export class TfjsIncrementalLM implements IncrementalLM {
  private B = 0;
  private T = 0;
  private tok: number[][] = [];
  private pos: number[][] = [];
  /** bias[i][q] = bias row of query column q over keys 0..q (keys beyond q are future, i.e. masked). */
  private bias: Float32Array[][] = [];

  constructor(private readonly model: PolicyModel) {}

  get config(): ModelConfig {
    return this.model.config;
  }

  begin(batch: number): void {
    this.B = batch;
    this.T = 0;
    this.tok = Array.from({ length: batch }, () => []);
    this.pos = Array.from({ length: batch }, () => []);
    this.bias = Array.from({ length: batch }, () => []);
  }

  async append(tokens: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array> {
    const { B } = this;
    const P = this.T;
    const K = P + S;
    for (let i = 0; i < B; i++) {
      for (let s = 0; s < S; s++) {
        this.tok[i].push(tokens[i * S + s]);
        this.pos[i].push(positions[i * S + s]);
        this.bias[i].push(bias.slice((i * S + s) * K, (i * S + s) * K + P + s + 1));
      }
    }
    this.T = K;
    const T = K;
    const ids = new Int32Array(B * T);
    const pos = new Int32Array(B * T);
    const full = new Float32Array(B * T * T).fill(NEG);
    for (let i = 0; i < B; i++) {
      for (let c = 0; c < T; c++) {
        ids[i * T + c] = this.tok[i][c];
        pos[i * T + c] = this.pos[i][c];
        full.set(this.bias[i][c], (i * T + c) * T);
      }
    }
    const V = this.model.config.vocabSize;
    const last = tf.tidy(() => {
      const logits = this.model.forward(tf.tensor2d(ids, [B, T], 'int32'), {
        positions: tf.tensor2d(pos, [B, T], 'int32'),
        bias: tf.tensor4d(full, [B, 1, T, T]),
      });
      return tf.reshape(tf.slice(logits, [0, T - 1, 0], [B, 1, V]), [B * V]);
    });
    const out = (await last.data()) as Float32Array;
    last.dispose();
    return out;
  }

  end(): void {
    this.tok = [];
    this.pos = [];
    this.bias = [];
  }
}

/** KV-cache IncrementalLM over a tfjs PolicyModel: each new token is one incremental step. */
export class TfjsKvLM implements IncrementalLM {
  private B = 0;
  private P = 0;
  private past: Array<{ k: tf.Tensor4D; v: tf.Tensor4D }> | null = null;

  constructor(private readonly model: PolicyModel) {}

  get config(): ModelConfig {
    return this.model.config;
  }

  begin(batch: number): void {
    this.end();
    this.B = batch;
    this.P = 0;
  }

  async append(tokens: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array> {
    const { B, P } = this;
    const ids = tf.tensor2d(tokens, [B, S], 'int32');
    const pos = tf.tensor2d(positions, [B, S], 'int32');
    const b = tf.tensor4d(bias, [B, 1, S, P + S]);
    const { logits, present } = this.model.forwardCached(ids, pos, b, this.past);
    tf.dispose([ids, pos, b]);
    this.disposePast();
    this.past = present;
    this.P = P + S;
    const out = (await logits.data()) as Float32Array;
    logits.dispose();
    return out;
  }

  private disposePast(): void {
    if (this.past) for (const { k, v } of this.past) tf.dispose([k, v]);
    this.past = null;
  }

  end(): void {
    this.disposePast();
  }
}

/** Forward-only response log-probs with a tfjs model, in chunks of `chunkRows` rows. */
export async function tfjsResponseLogProbs(
  model: PolicyModel,
  rows: readonly LogProbRow[],
  temperature = 1,
  chunkRows = 32,
): Promise<number[][]> {
  const out: number[][] = [];
  for (let start = 0; start < rows.length; start += chunkRows) {
    const chunk = rows.slice(start, start + chunkRows);
    const lp = tf.tidy(() => model.tokenLogProbs(chunk, { temperature }).logProbs);
    const [, R] = lp.shape;
    const data = (await lp.data()) as Float32Array;
    lp.dispose();
    chunk.forEach((r, i) => out.push(Array.from(data.subarray(i * R, i * R + r.responseIds.length))));
  }
  return out;
}

export class TfjsRolloutEngine implements RolloutEngine {
  readonly name: string;
  private readonly lm: IncrementalLM;

  /**
   * `model` is used directly: pass the trainer's own model to sample without copying weights (then setWeights is
   * only needed when the engine should sample from other weights), or a dedicated PolicyModel.
   */
  constructor(
    readonly model: PolicyModel,
    backendName = tf.getBackend(),
    /** Dispose the model with the engine (true when the engine made its own copy). */
    private readonly ownsModel = false,
    /** Generate with a KV cache (default) or by full recomputation of the prefix per token (the test oracle). */
    opts: { kvCache?: boolean } = {},
  ) {
    const kv = opts.kvCache ?? true;
    this.name = `tfjs-${backendName}${kv ? '' : '-recompute'}`;
    this.lm = kv ? new TfjsKvLM(model) : new TfjsIncrementalLM(model);
  }

  async setWeights(weights: ModelWeights): Promise<void> {
    this.model.setWeights(weights);
  }

  generate(prompts: readonly (readonly number[])[], opts: SamplingOptions, rng: Rng): Promise<GenerateResult> {
    return generateIncremental(this.lm, prompts, opts, rng);
  }

  logProbs(rows: readonly LogProbRow[], temperature = 1): Promise<number[][]> {
    return tfjsResponseLogProbs(this.model, rows, temperature);
  }

  async dispose(): Promise<void> {
    // A shared model (e.g. the trainer's) is disposed by its owner.
    if (this.ownsModel) this.model.dispose();
  }
}
