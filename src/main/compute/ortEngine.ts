/**
 * The onnxruntime-node rollout engine: the policy exported to ONNX with a KV cache (src/core/agent/onnxExport.ts),
 * run on the CPU execution provider with 2 intra-op threads (the machine has 2 cores; more threads only contend).
 *
 * generate(): one prefill call over the left-padded prompts, then one call per new token that appends a single
 * column and reuses the cached keys/values — so each token costs one incremental step. The sampling loop itself is
 * core's `generateIncremental`, shared with the tfjs engine (same Rng use, same stop rules).
 * logProbs(): one full-sequence call per chunk of right-padded rows (P = 0), log-softmax on the host.
 */
import * as ort from 'onnxruntime-node';
import {
  exportOnnx,
  generateIncremental,
  tokenLogProb,
  type GenerateResult,
  type IncrementalLM,
  type LogProbRow,
  type ModelConfig,
  type ModelWeights,
  type RolloutEngine,
  type SamplingOptions,
} from '../../core/agent';
import type { Rng } from '../../core/util/rng';

export interface OrtEngineOptions {
  /** Intra-op threads (default 2). */
  threads?: number;
  /** Rows per logProbs call (bounds the logits buffer: rows × length × vocab floats). */
  chunkRows?: number;
}

const NEG = -1e9;

function bigIds(a: Int32Array): BigInt64Array {
  const out = new BigInt64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = BigInt(a[i]);
  return out;
}

class OrtIncrementalLM implements IncrementalLM {
  private B = 0;
  private P = 0;
  private past: Record<string, ort.Tensor> = {};

  constructor(
    readonly config: ModelConfig,
    private readonly session: () => ort.InferenceSession,
  ) {}

  begin(batch: number): void {
    this.B = batch;
    this.P = 0;
    this.past = emptyPast(this.config, batch);
  }

  async append(tokens: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array> {
    const { B, P } = this;
    const V = this.config.vocabSize;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', bigIds(tokens), [B, S]),
      position_ids: new ort.Tensor('int64', bigIds(positions), [B, S]),
      attn_bias: new ort.Tensor('float32', bias, [B, 1, S, P + S]),
      ...this.past,
    };
    const out = await this.session().run(feeds);
    const next: Record<string, ort.Tensor> = {};
    for (let l = 0; l < this.config.nLayers; l++) {
      next[`past_key_${l}`] = out[`present_key_${l}`];
      next[`past_value_${l}`] = out[`present_value_${l}`];
    }
    this.past = next;
    this.P = P + S;
    const logits = out.logits.data as Float32Array;
    const last = new Float32Array(B * V);
    for (let i = 0; i < B; i++) last.set(logits.subarray((i * S + S - 1) * V, (i * S + S) * V), i * V);
    return last;
  }

  end(): void {
    this.past = {};
  }
}

function emptyPast(cfg: ModelConfig, B: number): Record<string, ort.Tensor> {
  const dh = cfg.dModel / cfg.nHeads;
  const past: Record<string, ort.Tensor> = {};
  for (let l = 0; l < cfg.nLayers; l++) {
    past[`past_key_${l}`] = new ort.Tensor('float32', new Float32Array(0), [B, cfg.nHeads, 0, dh]);
    past[`past_value_${l}`] = new ort.Tensor('float32', new Float32Array(0), [B, cfg.nHeads, 0, dh]);
  }
  return past;
}

export class OrtRolloutEngine implements RolloutEngine {
  readonly name = 'onnxruntime-cpu';
  private session: ort.InferenceSession | null = null;
  private config: ModelConfig | null = null;
  private readonly threads: number;
  private readonly chunkRows: number;

  constructor(opts: OrtEngineOptions = {}) {
    this.threads = opts.threads ?? 2;
    this.chunkRows = opts.chunkRows ?? 32;
  }

  /** Export the weights to ONNX and (re)create the session. */
  async setWeights(weights: ModelWeights): Promise<void> {
    const bytes = exportOnnx(weights);
    const next = await ort.InferenceSession.create(bytes, {
      executionProviders: ['cpu'],
      intraOpNumThreads: this.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    const prev = this.session;
    this.session = next;
    this.config = { ...weights.config };
    if (prev) await prev.release();
  }

  private ready(): { session: ort.InferenceSession; config: ModelConfig } {
    if (!this.session || !this.config) throw new Error('onnxruntime engine: call setWeights(weights) before generate/logProbs');
    return { session: this.session, config: this.config };
  }

  generate(prompts: readonly (readonly number[])[], opts: SamplingOptions, rng: Rng): Promise<GenerateResult> {
    const { config } = this.ready();
    const lm = new OrtIncrementalLM(config, () => this.ready().session);
    return generateIncremental(lm, prompts, opts, rng);
  }

  /** Raw logits [N, T, V] for right-padded token rows with causal attention (tests, debugging). */
  async logits(rows: readonly (readonly number[])[]): Promise<{ data: Float32Array; T: number }> {
    const { session, config } = this.ready();
    const N = rows.length;
    const T = Math.max(...rows.map((r) => r.length));
    const ids = new Int32Array(N * T);
    const pos = new Int32Array(N * T);
    rows.forEach((r, i) => {
      for (let c = 0; c < T; c++) {
        ids[i * T + c] = c < r.length ? r[c] : 0;
        pos[i * T + c] = c;
      }
    });
    const bias = new Float32Array(N * T * T);
    for (let i = 0; i < N; i++) for (let q = 0; q < T; q++) for (let k = q + 1; k < T; k++) bias[(i * T + q) * T + k] = NEG;
    const out = await session.run({
      input_ids: new ort.Tensor('int64', bigIds(ids), [N, T]),
      position_ids: new ort.Tensor('int64', bigIds(pos), [N, T]),
      attn_bias: new ort.Tensor('float32', bias, [N, 1, T, T]),
      ...emptyPast(config, N),
    });
    return { data: out.logits.data as Float32Array, T };
  }

  async logProbs(rows: readonly LogProbRow[], temperature = 1): Promise<number[][]> {
    const { config } = this.ready();
    const V = config.vocabSize;
    const out: number[][] = new Array(rows.length);
    // Sort by length so each chunk pads little; results go back to their original index.
    const order = rows.map((_, i) => i).sort((a, b) => rowLen(rows[a]) - rowLen(rows[b]) || a - b);
    for (let start = 0; start < order.length; start += this.chunkRows) {
      const idx = order.slice(start, start + this.chunkRows);
      const seqs = idx.map((i) => {
        const r = rows[i];
        const s: number[] = [];
        for (let k = 0; k < r.promptIds.length; k++) s.push(r.promptIds[k]);
        for (let k = 0; k < r.responseIds.length - 1; k++) s.push(r.responseIds[k]);
        return s;
      });
      const { data, T } = await this.logits(seqs);
      idx.forEach((i, n) => {
        const r = rows[i];
        const P = r.promptIds.length;
        const lp: number[] = [];
        for (let j = 0; j < r.responseIds.length; j++) lp.push(tokenLogProb(data, (n * T + P - 1 + j) * V, V, r.responseIds[j], temperature));
        out[i] = lp;
      });
    }
    return out;
  }

  async dispose(): Promise<void> {
    if (this.session) await this.session.release();
    this.session = null;
  }
}

function rowLen(r: LogProbRow): number {
  return r.promptIds.length + r.responseIds.length;
}

/** Create the engine and load weights; throws a clear error if onnxruntime-node cannot run here. */
export async function createOrtEngine(weights: ModelWeights, opts: OrtEngineOptions = {}): Promise<OrtRolloutEngine> {
  const e = new OrtRolloutEngine(opts);
  try {
    await e.setWeights(weights);
  } catch (err) {
    throw new Error(`compute.rolloutEngine "onnxruntime": onnxruntime-node could not load the policy (${(err as Error).message}); use compute.rolloutEngine "tfjs" instead`);
  }
  return e;
}
