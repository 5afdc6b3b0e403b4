/**
 * Hugging Face causal LMs (Qwen2 / Qwen3 / Llama) on onnxruntime-node: the rollout engine the lab's own model has
 * (ortEngine.ts), for the models of src/core/llm.
 *
 *   OrtLlm               the model exported to ONNX (src/core/llm/onnx: KV cache, LoRA merged, float32) and
 *                        rewritten for compute.rolloutPrecision (ortPrecision.ts: fp32 | fp16 | int8), in one session
 *                        on the CPU execution provider: sampling with a KV cache, logits, response log-probs
 *   OrtLlmRolloutEngine  the agent's RolloutEngine over an LlmPolicy, a drop-in for LlmRolloutEngine (tfjs): the
 *                        same sampling loop (generateLlmWith: temperature, top-p, top-k, one rng.float() per token),
 *                        the checkpoint's stop ids plus `</action>` on the decoded text, the same pad id — so with
 *                        equal logits the two engines draw the same tokens from the same seed
 *
 * Why a separate engine: tfjs on the CPU (wasm, single-threaded in Node) pays a dispatch per small op per token;
 * onnxruntime runs the whole step as one fused graph on 2 threads (numbers: docs/guides/llm.md, bench:llm).
 * Training stays in tfjs: onnxruntime cannot train. `setWeights` re-exports from the policy's current variables, so
 * call it after each optimizer step that should affect sampling (the trainer does, as for the lab's own model).
 *
 * Models whose float32 weights pass the 2 GiB an ONNX protobuf can hold (Qwen3-0.6B and up) are loaded with their
 * weights as ONNX external data, through a temp folder (sessionWithExternalData); fp16 / int8 stay below that limit.
 *
 * The cache lives in JS buffers sized for the whole rollout (prompt + new tokens) and is read in place by the binding;
 * the graph returns only the appended columns' keys and values (see src/core/llm/onnx/attention.ts).
 */
import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import type { GenerateResult, RolloutEngine, SamplingOptions } from '../../core/agent/engine';
import type { LogProbRow, ModelWeights } from '../../core/agent/model';
import { tokenLogProb } from '../../core/agent/sampling';
import type { RolloutPrecision } from '../../core/config/types';
import { causalBias, positionsFromMask, type LlmTensors } from '../../core/llm/causalLm';
import { llmParamCount, type LlmConfig } from '../../core/llm/config';
import { generateLlmWith, type LlmGenerateResult, type LlmIncremental, type LlmSamplingOptions } from '../../core/llm/generate';
import { exportLlmOnnx, exportLlmOnnxExternal, llmOnnxTensors, ropeFeeds } from '../../core/llm/onnx';
import { ACTION_CLOSE, type LlmPolicy } from '../../core/llm/policy';
import { ropeFrequencies } from '../../core/llm/rope';
import type { Rng } from '../../core/util/rng';
import { emptyKvFeeds, HostKvCache, type KvCacheShape } from './hostKvCache';
import { ROLLOUT_PRECISIONS, withRolloutPrecision } from './ortPrecision';
import { processTempDir } from '../platform/tempDirs';

export interface OrtLlmOptions {
  /** Intra-op threads (default 2: the machine's cores; more only contend). */
  threads?: number;
  /** compute.rolloutPrecision: fp32 (default), fp16 or int8 (ortPrecision.ts). */
  precision?: RolloutPrecision;
  /** Let onnxruntime's pool threads spin between ops (off: under load a spinning thread starves the working one). */
  spin?: boolean;
  /** Most logits (floats) one scoring call may return: bounds memory for large vocabularies (default 2²³ = 32 MB). */
  logitBudget?: number;
  /** Weights as ONNX external data even under the 2 GiB protobuf limit (tests; past it they always are). */
  externalData?: boolean;
}

/** A protobuf message (the ONNX model) cannot exceed 2 GiB; the weights are most of it. */
const PROTOBUF_LIMIT = 2 ** 31 - 64 * 2 ** 20;

/** The cache geometry of an HF config (grouped-query attention: numKvHeads key/value heads). */
function kvShape(cfg: LlmConfig): KvCacheShape {
  return { layers: cfg.numLayers, kvHeads: cfg.numKvHeads, headDim: cfg.headDim };
}

/** The sampling loop's LlmIncremental on the exported graph, with a host-owned cache of `capacity` columns. */
class OrtLlmIncremental implements LlmIncremental {
  // Made at begin(), which generateLlmWith reaches after checking the sampling options the capacity comes from.
  private cache: HostKvCache | null = null;

  constructor(
    private readonly cfg: LlmConfig,
    private readonly freq: { invFreq: Float32Array; scale: number },
    private readonly session: ort.InferenceSession,
    private readonly capacity: number,
  ) {}

  get vocabSize(): number {
    return this.cfg.vocabSize;
  }

  get maxPositions(): number {
    return this.cfg.maxPositionEmbeddings;
  }

  begin(batch: number): void {
    this.cache = new HostKvCache(kvShape(this.cfg), this.capacity, 'onnxruntime LLM engine');
    this.cache.begin(batch);
  }

  async append(ids: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array> {
    const cache = this.cache;
    if (!cache) throw new Error('onnxruntime LLM engine: append() before begin()');
    const B = cache.batch;
    const cacheFeeds = cache.feeds(bias, S);
    const { headDim: D, vocabSize: V } = this.cfg;
    for (const t of ids) if (!(t >= 0 && t < V)) throw new Error(`token id ${t} outside [0, ${V}) (vocab_size)`);
    const select = new Int32Array(B);
    for (let i = 0; i < B; i++) select[i] = i * S + S - 1;
    const { cos, sinSigned } = ropeFeeds(this.freq, positions);
    const out = await this.session.run({
      input_ids: new ort.Tensor('int32', ids, [B, S]),
      rope_cos: new ort.Tensor('float32', cos, [B, S, D]),
      rope_sin: new ort.Tensor('float32', sinSigned, [B, S, D]),
      select: new ort.Tensor('int32', select, [B]),
      ...cacheFeeds,
    });
    cache.store(out, S);
    return out.logits.data as Float32Array;
  }

  end(): void {
    this.cache?.end();
  }
}

/** An HF causal LM with fixed weights in one onnxruntime session. */
export class OrtLlm {
  private readonly freq: { invFreq: Float32Array; scale: number };

  private constructor(
    readonly config: LlmConfig,
    private readonly session: ort.InferenceSession,
    readonly precision: RolloutPrecision,
    private readonly logitBudget: number,
  ) {
    this.freq = ropeFrequencies(config);
  }

  /** Export `tensors` (HF names, float32), apply the precision, open the session. */
  static async create(cfg: LlmConfig, tensors: LlmTensors, opts: OrtLlmOptions = {}): Promise<OrtLlm> {
    const precision = opts.precision ?? 'fp32';
    if (!ROLLOUT_PRECISIONS.includes(precision))
      throw new Error(`compute.rolloutPrecision: must be one of ${ROLLOUT_PRECISIONS.join(', ')}, got ${JSON.stringify(precision)}`);
    const bytes = llmParamCount(cfg) * 4;
    const external = opts.externalData === true || bytes > PROTOBUF_LIMIT;
    if (external && precision !== 'fp32')
      throw new Error(
        `compute.rolloutPrecision "${precision}" rewrites the export in memory, which one ONNX protobuf limits to 2 GiB; this model's float32 weights take ${(bytes / 2 ** 30).toFixed(2)} GiB: use compute.rolloutPrecision=fp32 (its weights then go to an external data file) or compute.rolloutEngine=tfjs`,
      );
    const threads = opts.threads ?? 2;
    const options: ort.InferenceSession.SessionOptions = {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      // As ortEngine.ts: pool threads sleep between ops unless asked to spin (a spinning helper holds a shared core).
      ...(opts.spin ? {} : { extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } } }),
    };
    const session = external
      ? await sessionWithExternalData(cfg, tensors, options)
      : await ort.InferenceSession.create(withRolloutPrecision(exportLlmOnnx(cfg, tensors), precision), options);
    return new OrtLlm(cfg, session, precision, opts.logitBudget ?? 2 ** 23);
  }

  /** Sample continuations with the KV cache (the loop of src/core/llm/generate.ts). */
  generate(prompts: readonly (readonly number[])[], opts: LlmSamplingOptions, rng: Rng, padId = 0): Promise<LlmGenerateResult> {
    const longest = prompts.reduce((m, p) => Math.max(m, p.length), 0);
    // Room for every column the loop appends: the padded prompt, then one per sampled token but the last.
    const capacity = Math.max(1, longest + Math.max(0, opts.maxNewTokens - 1));
    return generateLlmWith(new OrtLlmIncremental(this.config, this.freq, this.session, capacity), prompts, opts, rng, padId);
  }

  /** Logits [M, V] of the selected rows of a padded batch ids [N, T] with `mask` (1 = real token). */
  private async selected(ids: Int32Array, mask: Uint8Array, N: number, T: number, select: Int32Array): Promise<Float32Array> {
    const V = this.config.vocabSize;
    for (const t of ids) if (!(t >= 0 && t < V)) throw new Error(`token id ${t} outside [0, ${V}) (vocab_size)`);
    const positions = positionsFromMask(mask, N, T);
    for (const p of positions)
      if (p >= this.config.maxPositionEmbeddings)
        throw new Error(
          `position ${p} is beyond max_position_embeddings ${this.config.maxPositionEmbeddings}; shorten the prompt or response`,
        );
    const { cos, sinSigned } = ropeFeeds(this.freq, positions);
    const D = this.config.headDim;
    const out = await this.session.run({
      input_ids: new ort.Tensor('int32', ids, [N, T]),
      rope_cos: new ort.Tensor('float32', cos, [N, T, D]),
      rope_sin: new ort.Tensor('float32', sinSigned, [N, T, D]),
      attn_bias: new ort.Tensor('float32', causalBias(mask, N, T, 0, T), [N, 1, T, T]),
      select: new ort.Tensor('int32', select, [select.length]),
      ...emptyKvFeeds(kvShape(this.config), N),
    });
    return out.logits.data as Float32Array;
  }

  /** Logits [N, T, V] of a padded batch, as HfCausalLM.forward (pads hidden as keys, positions count real tokens). */
  forwardLogits(ids: Int32Array, N: number, T: number, mask?: Uint8Array): Promise<Float32Array> {
    return this.selected(
      ids,
      mask ?? new Uint8Array(N * T).fill(1),
      N,
      T,
      Int32Array.from({ length: N * T }, (_, i) => i),
    );
  }

  /**
   * Forward-only log-probs of each row's response tokens (log-softmax of logits / temperature on the host, over the
   * full vocabulary, as the sampler's behaviour log-probs). Rows are scored in chunks, sorted by length, each chunk
   * right-padded and returning at most `logitBudget` logits.
   */
  async responseLogProbs(rows: readonly LogProbRow[], temperature = 1): Promise<number[][]> {
    if (!(temperature > 0)) throw new Error(`logProbs: temperature must be > 0, got ${temperature}`);
    const V = this.config.vocabSize;
    const maxTokens = Math.max(1, Math.floor(this.logitBudget / V));
    const out: number[][] = rows.map(() => []);
    const order = rows
      .map((_, i) => i)
      .filter((i) => rows[i].responseIds.length > 0)
      .sort((a, b) => rowLen(rows[a]) - rowLen(rows[b]) || a - b);
    for (let start = 0; start < order.length;) {
      const idx: number[] = [];
      let tokens = 0;
      while (start < order.length && (idx.length === 0 || tokens + rows[order[start]].responseIds.length <= maxTokens)) {
        tokens += rows[order[start]].responseIds.length;
        idx.push(order[start++]);
      }
      const N = idx.length;
      const T = Math.max(...idx.map((i) => rowLen(rows[i]) - 1));
      const ids = new Int32Array(N * T);
      const mask = new Uint8Array(N * T);
      const select = new Int32Array(tokens);
      let m = 0;
      idx.forEach((i, n) => {
        const r = rows[i];
        const P = r.promptIds.length;
        if (P < 1) throw new Error(`logProbs: row ${i} has an empty prompt`);
        for (let k = 0; k < rowLen(r) - 1; k++) {
          ids[n * T + k] = k < P ? r.promptIds[k] : r.responseIds[k - P];
          mask[n * T + k] = 1;
        }
        for (let j = 0; j < r.responseIds.length; j++) select[m++] = n * T + P - 1 + j;
      });
      const logits = await this.selected(ids, mask, N, T, select);
      m = 0;
      for (const i of idx) {
        const r = rows[i];
        const lp: number[] = [];
        for (let j = 0; j < r.responseIds.length; j++, m++) {
          const t = r.responseIds[j];
          if (!(t >= 0 && t < V)) throw new Error(`logProbs: response token id ${t} outside [0, ${V})`);
          lp.push(tokenLogProb(logits, m * V, V, t, temperature));
        }
        out[i] = lp;
      }
    }
    return out;
  }

  release(): Promise<void> {
    return this.session.release();
  }
}

/**
 * A model past the 2 GiB protobuf limit: the graph and its external weight file are written to a fresh folder in the
 * OS temp dir, onnxruntime loads them from there, and the folder is removed once the session holds the weights (it
 * is written again on every re-export, so the temp disk needs the float32 weights' size free). The folder names this
 * process (processTempDir), so one a kill left is removed by the next process that makes one.
 */
async function sessionWithExternalData(
  cfg: LlmConfig,
  tensors: LlmTensors,
  options: ort.InferenceSession.SessionOptions,
): Promise<ort.InferenceSession> {
  const { model, data } = exportLlmOnnxExternal(cfg, tensors, 'weights.bin');
  const dir = await processTempDir('arlarena-onnx-');
  try {
    await writeFile(join(dir, 'model.onnx'), model);
    const f = await open(join(dir, 'weights.bin'), 'w');
    try {
      for (const chunk of data) await f.write(chunk);
    } finally {
      await f.close();
    }
    return await ort.InferenceSession.create(join(dir, 'model.onnx'), options);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function rowLen(r: LogProbRow): number {
  return r.promptIds.length + r.responseIds.length;
}

/** The agent's RolloutEngine for an LlmPolicy on onnxruntime (see the file comment). */
export class OrtLlmRolloutEngine implements RolloutEngine {
  readonly name: string;
  readonly precision: RolloutPrecision;
  private model: OrtLlm | null = null;
  private readonly padId: number;

  constructor(
    private readonly policy: LlmPolicy,
    private readonly opts: OrtLlmOptions & { padId?: number } = {},
  ) {
    this.precision = opts.precision ?? 'fp32';
    if (!ROLLOUT_PRECISIONS.includes(this.precision))
      throw new Error(`compute.rolloutPrecision: must be one of ${ROLLOUT_PRECISIONS.join(', ')}, got ${JSON.stringify(this.precision)}`);
    this.name = `onnxruntime-cpu${this.precision === 'fp32' ? '' : `-${this.precision}`}-llm-kvcache`;
    // The pad id rule of LlmRolloutEngine (tfjs): the tokenizer's pad token, else the first stop id.
    const pad = policy.tokenizer.specialTokens.pad;
    this.padId = opts.padId ?? (pad !== null ? policy.tokenizer.tokenId(pad) : undefined) ?? policy.stopIds()[0] ?? 0;
  }

  /**
   * Re-export from the policy's current variables (LoRA merged in). The argument is the lab model's weights in the
   * RolloutEngine contract; an LLM engine reads its policy instead, as LlmRolloutEngine does.
   */
  async setWeights(_weights?: ModelWeights): Promise<void> {
    const { model, lora } = this.policy;
    const next = await OrtLlm.create(model.config, llmOnnxTensors(model, lora), this.opts);
    const prev = this.model;
    this.model = next;
    if (prev) await prev.release();
  }

  private ready(): OrtLlm {
    if (!this.model) throw new Error('onnxruntime LLM engine: call setWeights() before generate/logProbs');
    return this.model;
  }

  /** As LlmRolloutEngine.generate: the checkpoint's stop ids replace `opts.stopIds`, `</action>` ends a turn too. */
  generate(prompts: readonly (readonly number[])[], opts: SamplingOptions, rng: Rng): Promise<GenerateResult> {
    const p = this.policy;
    return this.ready().generate(
      prompts,
      { ...opts, stopIds: p.stopIds(), stopStrings: [ACTION_CLOSE], decode: (ids) => p.tokenizer.decode(ids) },
      rng,
      this.padId,
    );
  }

  logProbs(rows: readonly LogProbRow[], temperature = 1): Promise<number[][]> {
    return this.ready().responseLogProbs(rows, temperature);
  }

  /** Logits [N, T, V] of a padded batch (tests, debugging). */
  forwardLogits(ids: Int32Array, N: number, T: number, mask?: Uint8Array): Promise<Float32Array> {
    return this.ready().forwardLogits(ids, N, T, mask);
  }

  async dispose(): Promise<void> {
    if (this.model) await this.model.release();
    this.model = null;
  }
}

/** The engine with the policy's current weights loaded; a clear error when onnxruntime cannot run the export. */
export async function createOrtLlmEngine(policy: LlmPolicy, opts: OrtLlmOptions & { padId?: number } = {}): Promise<OrtLlmRolloutEngine> {
  const e = new OrtLlmRolloutEngine(policy, opts);
  try {
    await e.setWeights();
  } catch (err) {
    throw new Error(
      `compute.rolloutEngine "onnxruntime": the ${policy.model.config.architecture} export could not be loaded (${(err as Error).message}); use compute.rolloutEngine "tfjs" instead`,
    );
  }
  return e;
}
