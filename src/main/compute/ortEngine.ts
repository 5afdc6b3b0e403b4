/**
 * The onnxruntime-node rollout engine: the policy exported to ONNX with a KV cache (src/core/agent/onnxExport.ts),
 * run on the CPU execution provider with 2 intra-op threads (the machine has 2 cores; more threads only contend).
 *
 * generate(): one prefill call over the left-padded prompts, then one call per new token that appends a single
 * column and reuses the cached keys/values — so each token costs one incremental step. The sampling loop itself is
 * core's `generateIncremental`, shared with the tfjs engine (same Rng use, same stop rules). By default the steps run
 * on the decoder graph of ortDecoder.ts (host-owned fixed-capacity cache, only new columns cross the binding);
 * `decoder: 'concat-cache'` runs them on the full-sequence graph, feeding each step's presents back as pasts (the
 * original path, kept as the reference the decoder is tested against).
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
import type { RolloutPrecision } from '../../core/config/types';
import { exportDecoderOnnx, OrtDecoderLM } from './ortDecoder';
import { ROLLOUT_PRECISIONS, withRolloutPrecision } from './ortPrecision';

export interface OrtEngineOptions {
  /** Intra-op threads (default 2). */
  threads?: number;
  /** Rows per logProbs call (bounds the logits buffer: rows × length × vocab floats). */
  chunkRows?: number;
  /**
   * Generation graph: 'split-cache' (default, ortDecoder.ts: the cache stays in JS buffers and only new columns move)
   * or 'concat-cache' (the full-sequence graph; every step copies the whole cache in and out — slower, the reference).
   */
  decoder?: 'split-cache' | 'concat-cache';
  /**
   * Let onnxruntime's pool threads spin between ops (its default; lower latency per op on an otherwise idle
   * machine). Off by default: under load spinning threads starve the thread doing the work.
   */
  spin?: boolean;
  /**
   * compute.rolloutPrecision (ortPrecision.ts): fp32 (default, the exported graphs as they are), fp16 (float16
   * weights and activations) or int8 (dynamic int8 weight matmuls). Both graphs get it, so generate() and logProbs()
   * agree with each other and differ from the float32 trainer.
   */
  precision?: RolloutPrecision;
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
  readonly name: string;
  private session: ort.InferenceSession | null = null;
  private decoderSession: ort.InferenceSession | null = null;
  private config: ModelConfig | null = null;
  /** Weights whose full-sequence graph is not built yet (setWeights after the first; see there). */
  private pending: ModelWeights | null = null;
  /** The full-sequence graph being built, and for which weights: callers at the same time share one build. */
  private building: { weights: ModelWeights; session: Promise<ort.InferenceSession> } | null = null;
  private readonly threads: number;
  private readonly chunkRows: number;
  private readonly decoder: 'split-cache' | 'concat-cache';
  private readonly spin: boolean;
  readonly precision: RolloutPrecision;

  constructor(opts: OrtEngineOptions = {}) {
    const precision = opts.precision ?? 'fp32';
    if (!ROLLOUT_PRECISIONS.includes(precision))
      throw new Error(`onnxruntime engine: precision must be one of ${ROLLOUT_PRECISIONS.join(', ')}, got ${JSON.stringify(precision)}`);
    this.precision = precision;
    this.name = precision === 'fp32' ? 'onnxruntime-cpu' : `onnxruntime-cpu-${precision}`;
    this.threads = opts.threads ?? 2;
    this.spin = opts.spin ?? false;
    this.chunkRows = opts.chunkRows ?? 32;
    const decoder = opts.decoder ?? 'split-cache';
    if (decoder !== 'split-cache' && decoder !== 'concat-cache')
      throw new Error(`onnxruntime engine: decoder must be "split-cache" or "concat-cache", got ${JSON.stringify(decoder)}`);
    this.decoder = decoder;
  }

  private createSession(bytes: Uint8Array): Promise<ort.InferenceSession> {
    return ort.InferenceSession.create(bytes, {
      executionProviders: ['cpu'],
      intraOpNumThreads: this.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // Pool threads sleep between ops instead of spinning. On a shared 2-core machine a spinning helper thread
      // holds a core the op's other half (or another process) needs: measured at load average ≈17, nano
      // generation ran 1.1k tok/s spinning vs 2.7k–7.5k not, small 0.40k vs 0.79k (same process, alternating).
      ...(this.spin ? {} : { extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } } }),
    });
  }

  /**
   * Export the weights to ONNX and (re)create the sessions (full-sequence graph, and the decoder graph if used).
   * The first call builds both, so an engine that onnxruntime cannot load fails at creation (createOrtEngine). Later
   * calls (after each update) build the decoder graph and leave the full-sequence one to the next logits/logProbs:
   * a rollout engine with the trainer computing log-probs only generates, and exporting, optimising and (int8)
   * quantising a graph it never ran cost every RL step (nano: setWeights 19 -> 9 CPU ms at fp32, 27 -> 12 at int8).
   * The graph built later is the same export of the same weights (kept as a copy), so its numbers are too.
   */
  async setWeights(weights: ModelWeights): Promise<void> {
    const first = this.config === null;
    if (!first && this.decoder === 'split-cache') {
      const nextDecoder = await this.createSession(withRolloutPrecision(exportDecoderOnnx(weights), this.precision));
      const prev = [this.session, this.decoderSession];
      this.session = null;
      this.decoderSession = nextDecoder;
      this.pending = copyWeights(weights);
      this.config = { ...weights.config };
      for (const p of prev) if (p) await p.release();
      return;
    }
    const next = await this.createSession(withRolloutPrecision(exportOnnx(weights), this.precision));
    let nextDecoder: ort.InferenceSession | null = null;
    try {
      if (this.decoder === 'split-cache')
        nextDecoder = await this.createSession(withRolloutPrecision(exportDecoderOnnx(weights), this.precision));
    } catch (err) {
      await next.release();
      throw err;
    }
    const prev = [this.session, this.decoderSession];
    this.session = next;
    this.decoderSession = nextDecoder;
    this.pending = null;
    this.config = { ...weights.config };
    for (const p of prev) if (p) await p.release();
  }

  /**
   * The full-sequence session, built from the weights of the last setWeights when they have none yet. Callers at
   * the same time wait for one build (each its own would leave all but the last session unreleased); a build whose
   * weights were replaced while it ran (setWeights, dispose) is released and, while weights are pending, another is
   * built for the new ones, so no call after a setWeights is answered by the weights before it.
   */
  private async fullSession(): Promise<ort.InferenceSession> {
    this.ready();
    while (!this.session && this.pending) {
      const weights = this.pending;
      if (this.building?.weights !== weights)
        this.building = { weights, session: this.createSession(withRolloutPrecision(exportOnnx(weights), this.precision)) };
      const build = this.building;
      let session: ort.InferenceSession;
      try {
        session = await build.session;
      } catch (e) {
        if (this.building === build) this.building = null;
        throw e;
      }
      // The first caller back settles the build; the others find the session (or the next build) on their loop.
      if (this.building !== build) continue;
      this.building = null;
      if (this.pending === weights && !this.session) {
        this.session = session;
        this.pending = null;
      } else await session.release();
    }
    return this.ready().session;
  }

  private ready(): { session: ort.InferenceSession; config: ModelConfig } {
    if ((!this.session && !this.pending) || !this.config)
      throw new Error('onnxruntime engine: call setWeights(weights) before generate/logProbs');
    return { session: this.session!, config: this.config };
  }

  generate(prompts: readonly (readonly number[])[], opts: SamplingOptions, rng: Rng): Promise<GenerateResult> {
    const { config } = this.ready();
    if (this.decoder === 'concat-cache')
      return generateIncremental(new OrtIncrementalLM(config, () => this.ready().session), prompts, opts, rng);
    // Room for every column generateIncremental appends: the padded prompt, then one per sampled token but the last.
    const longest = prompts.reduce((m, p) => Math.max(m, p.length), 0);
    const capacity = Math.max(1, longest + Math.max(0, opts.maxNewTokens - 1));
    const lm = new OrtDecoderLM(config, () => this.decoderReady(), capacity);
    return generateIncremental(lm, prompts, opts, rng);
  }

  private decoderReady(): ort.InferenceSession {
    this.ready();
    if (!this.decoderSession) throw new Error('onnxruntime engine: the decoder session is missing; call setWeights(weights) again');
    return this.decoderSession;
  }

  /** Raw logits [N, T, V] for right-padded token rows with causal attention (tests, debugging). */
  async logits(rows: readonly (readonly number[])[]): Promise<{ data: Float32Array; T: number }> {
    const session = await this.fullSession();
    const { config } = this.ready();
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

  /**
   * Forward-only response log-probs. Rows are sorted by length and scored in chunks. Within a chunk, the longest
   * prompt prefix common to all rows (at least the env's intro and task lines; the whole prompt for the G
   * rollouts of one task at turn 0) is encoded once and its keys/values are shared by every row, so shared prompt
   * text is not recomputed (`sharePrefix: false` disables it; results are the same up to float rounding).
   */
  async logProbs(rows: readonly LogProbRow[], temperature = 1, opts: { sharePrefix?: boolean } = {}): Promise<number[][]> {
    const { config } = this.ready();
    const V = config.vocabSize;
    const share = opts.sharePrefix ?? true;
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
      // C = shared prefix length; every row keeps position P−1 (which predicts its first response token).
      let C = 0;
      if (share && idx.length > 1) {
        const maxC = Math.min(...idx.map((i) => rows[i].promptIds.length - 1));
        const first = rows[idx[0]].promptIds;
        while (C < maxC && idx.every((i) => rows[i].promptIds[C] === first[C])) C++;
        if (C < 8) C = 0;
      }
      const { data, T } = C > 0 ? await this.logitsWithPrefix(seqs, C) : await this.logits(seqs);
      idx.forEach((i, n) => {
        const r = rows[i];
        const P = r.promptIds.length;
        const lp: number[] = [];
        for (let j = 0; j < r.responseIds.length; j++)
          lp.push(tokenLogProb(data, (n * T + P - 1 + j - C) * V, V, r.responseIds[j], temperature));
        out[i] = lp;
      });
    }
    return out;
  }

  /**
   * Logits of columns C.. of right-padded rows whose first C tokens are identical: the prefix is run once
   * (batch 1), its cache tiled to every row, then the suffixes are appended in one call. Returns [N, T, V] with
   * T = longest suffix; column t is sequence position C + t.
   */
  private async logitsWithPrefix(seqs: readonly (readonly number[])[], C: number): Promise<{ data: Float32Array; T: number }> {
    const session = await this.fullSession();
    const { config } = this.ready();
    const N = seqs.length;
    const H = config.nHeads;
    const dh = config.dModel / H;
    const prefIds = new Int32Array(C);
    const prefPos = new Int32Array(C);
    for (let c = 0; c < C; c++) {
      prefIds[c] = seqs[0][c];
      prefPos[c] = c;
    }
    const prefBias = new Float32Array(C * C);
    for (let q = 0; q < C; q++) for (let k = q + 1; k < C; k++) prefBias[q * C + k] = NEG;
    const pre = await session.run({
      input_ids: new ort.Tensor('int64', bigIds(prefIds), [1, C]),
      position_ids: new ort.Tensor('int64', bigIds(prefPos), [1, C]),
      attn_bias: new ort.Tensor('float32', prefBias, [1, 1, C, C]),
      ...emptyPast(config, 1),
    });
    const past: Record<string, ort.Tensor> = {};
    const per = H * C * dh;
    for (let l = 0; l < config.nLayers; l++) {
      for (const kind of ['key', 'value'] as const) {
        const src = pre[`present_${kind}_${l}`].data as Float32Array;
        const tiled = new Float32Array(N * per);
        for (let n = 0; n < N; n++) tiled.set(src, n * per);
        past[`past_${kind}_${l}`] = new ort.Tensor('float32', tiled, [N, H, C, dh]);
      }
    }
    const T = Math.max(...seqs.map((s) => s.length)) - C;
    const K = C + T;
    const ids = new Int32Array(N * T);
    const pos = new Int32Array(N * T);
    const bias = new Float32Array(N * T * K);
    for (let n = 0; n < N; n++) {
      for (let t = 0; t < T; t++) {
        ids[n * T + t] = C + t < seqs[n].length ? seqs[n][C + t] : 0;
        pos[n * T + t] = Math.min(C + t, config.maxSeqLen - 1);
        // Keys: the whole prefix, then the suffix causally (right padding sits after every real query).
        for (let k = C + t + 1; k < K; k++) bias[(n * T + t) * K + k] = NEG;
      }
    }
    const out = await session.run({
      input_ids: new ort.Tensor('int64', bigIds(ids), [N, T]),
      position_ids: new ort.Tensor('int64', bigIds(pos), [N, T]),
      attn_bias: new ort.Tensor('float32', bias, [N, 1, T, K]),
      ...past,
    });
    return { data: out.logits.data as Float32Array, T };
  }

  async dispose(): Promise<void> {
    if (this.session) await this.session.release();
    if (this.decoderSession) await this.decoderSession.release();
    this.session = null;
    this.decoderSession = null;
    this.pending = null;
    // A build still under way is released by its caller (its weights are no longer pending).
  }
}

/** The weights' own copy: a caller may reuse its arrays after setWeights returns. */
function copyWeights(w: ModelWeights): ModelWeights {
  return { config: { ...w.config }, tensors: Object.fromEntries(Object.entries(w.tensors).map(([k, t]) => [k, t.slice()])) };
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
    throw new Error(
      `compute.rolloutEngine "onnxruntime": onnxruntime-node could not load the policy (${(err as Error).message}); use compute.rolloutEngine "tfjs" instead`,
    );
  }
  return e;
}
