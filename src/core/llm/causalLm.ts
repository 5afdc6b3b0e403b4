/**
 * A pretrained Hugging Face causal LM (Qwen2 / Qwen3 / Llama) in tfjs: the checkpoint's tensors as tfjs variables
 * under their Hugging Face names (PyTorch layout), and the three things the lab asks of a policy:
 *   forward        logits [N, T, V] of a padded batch (attention mask → additive bias, position ids from the mask);
 *   tokenLogProbs  differentiable log-probs (and entropies) of each row's response tokens given its prompt, with the
 *                  response mask, for tf.variableGrads;
 *   step           one incremental step with a key/value cache (generation; see generate.ts).
 *
 * Everything runs in float32 whatever the checkpoint's dtype (bf16 and fp16 weights are widened exactly on load).
 * Adapters (LoRA) hook in through `projection`, which every linear layer goes through.
 */
import * as tf from '@tensorflow/tfjs';
import type { Rng } from '../util/rng';
import { buildBias } from '../agent/engine';
import { llmParamCount, llmWeightSpecs, type LlmConfig, type LlmWeightSpec } from './config';
import type { KvEntry } from './attention';
import { decoderLayer, type DecoderLayerParts } from './decoderLayer';
import { linear } from './linear';
import { lmHead } from './lmHead';
import { rmsNorm } from './rmsNorm';
import { ropeFrequencies, ropeTables } from './rope';

/** Upper bound on the transposed-weight cache (wasm's heap is 4 GiB in all). */
const TRANSPOSE_CACHE_BYTES = 1 << 30;

/** Host-memory weights by Hugging Face tensor name. */
export type LlmTensors = Record<string, Float32Array>;

export interface LlmRow {
  promptIds: ArrayLike<number>;
  responseIds: ArrayLike<number>;
}

export interface LlmTokenLogProbs {
  /** [N, R]; 0 where mask is 0. */
  logProbs: tf.Tensor2D;
  /** Entropy (nats) of the distribution that predicts each response token. [N, R]. */
  entropy: tf.Tensor2D;
  /** 1 for real response tokens. [N, R]. */
  mask: tf.Tensor2D;
}

/** Wraps a linear projection: (layer-qualified module name, input, base output function) → output. */
export type ProjectionHook = (module: string, x: tf.Tensor2D, base: (x: tf.Tensor2D) => tf.Tensor2D) => tf.Tensor2D;

/** Seeded random weights in a checkpoint's shapes (tests, random-weight benchmarks): N(0, std), norms 1, biases 0. */
export function initLlmTensors(cfg: LlmConfig, rng: Rng, std = 0.02): LlmTensors {
  const out: LlmTensors = {};
  for (const s of llmWeightSpecs(cfg)) {
    const n = s.shape.reduce((a, b) => a * b, 1);
    const a = new Float32Array(n);
    if (s.init === 'ones') a.fill(1);
    else if (s.init === 'normal') for (let i = 0; i < n; i++) a[i] = rng.normal() * std;
    out[s.name] = a;
  }
  return out;
}

/** Check every expected tensor is there with the right size, and nothing unknown is (names as in the error). */
export function checkLlmTensors(cfg: LlmConfig, names: Iterable<string>, sizeOf: (name: string) => number[] | undefined): void {
  const specs = llmWeightSpecs(cfg);
  const want = new Set(specs.map((s) => s.name));
  const missing = specs.filter((s) => sizeOf(s.name) === undefined).map((s) => s.name);
  if (missing.length) {
    throw new Error(
      `weights: ${missing.length} tensor(s) missing for ${cfg.architecture} (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}); the weight files do not match config.json`,
    );
  }
  for (const s of specs) {
    const shape = sizeOf(s.name)!;
    if (shape.length !== s.shape.length || shape.some((v, i) => v !== s.shape[i])) {
      throw new Error(
        `weights: tensor "${s.name}" has shape [${shape.join(', ')}] but config.json implies [${s.shape.join(', ')}]; the weight files do not match config.json`,
      );
    }
  }
  // A tied checkpoint may still carry lm_head.weight (a copy); rotary caches are not weights.
  const extra = [...names].filter(
    (n) => !want.has(n) && !(n === 'lm_head.weight' && cfg.tieWordEmbeddings) && !n.endsWith('rotary_emb.inv_freq'),
  );
  if (extra.length) {
    throw new Error(
      `weights: ${extra.length} unexpected tensor(s) (${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ', …' : ''}) for ${cfg.architecture}; is config.json from another model?`,
    );
  }
}

let live = 0;

export class HfCausalLM {
  readonly config: LlmConfig;
  readonly vars: Record<string, tf.Variable>;
  /** Variable-name prefix (tfjs variable names are global). */
  readonly name: string;
  private readonly freq: { invFreq: Float32Array; scale: number };
  /** Set by adapters (LoRA): every projection goes through it. */
  projectionHook: ProjectionHook | null = null;
  /**
   * Transposed copies ([in, out]) of weights, for products that need no gradient w.r.t. them: on tfjs-wasm every
   * x·Wᵀ first transposes W (the lab's BatchMatMul fix), which for a few rows costs far more than the product (a
   * [4, 256]·[8192, 256]ᵀ head: 118 ms vs 1.5–4 ms pre-transposed, measured). Used in generation steps and for frozen
   * weights (the base under LoRA); keyed by the variable's data, so an optimizer step invalidates its entry.
   */
  private readonly tCache = new Map<string, { data: object; t: tf.Tensor2D }>();
  private tCacheBytes = 0;
  private inferenceStep = false;

  private constructor(cfg: LlmConfig, tensors: LlmTensors, name: string, trainable: boolean) {
    this.config = { ...cfg };
    this.name = `${name}#${++live}`;
    this.freq = ropeFrequencies(cfg);
    this.vars = {};
    const specs = llmWeightSpecs(cfg);
    checkLlmTensors(cfg, Object.keys(tensors), (n) => {
      const spec = specs.find((s) => s.name === n);
      const data = tensors[n];
      if (!data) return undefined;
      // Host tensors carry no shape: check the element count against the spec and report the spec's shape.
      return spec && data.length === spec.shape.reduce((a, b) => a * b, 1) ? spec.shape : [data.length];
    });
    for (const s of specs)
      this.vars[s.name] = tf.variable(tf.tensor(tensors[s.name], s.shape, 'float32'), trainable, `${this.name}/${s.name}`);
  }

  /** Build from host tensors (a loaded checkpoint). `trainable` false freezes the base (LoRA trains adapters only). */
  static fromTensors(cfg: LlmConfig, tensors: LlmTensors, opts: { name?: string; trainable?: boolean } = {}): HfCausalLM {
    return new HfCausalLM(cfg, tensors, opts.name ?? 'llm', opts.trainable ?? true);
  }

  static random(cfg: LlmConfig, rng: Rng, std = 0.02): HfCausalLM {
    return new HfCausalLM(cfg, initLlmTensors(cfg, rng, std), 'llm', true);
  }

  specs(): LlmWeightSpec[] {
    return llmWeightSpecs(this.config);
  }

  paramCount(): number {
    return llmParamCount(this.config);
  }

  /** The base weights' variables in spec order (full fine-tuning trains these). */
  baseVariables(): tf.Variable[] {
    return this.specs().map((s) => this.vars[s.name]);
  }

  getTensors(): LlmTensors {
    const out: LlmTensors = {};
    for (const s of this.specs()) out[s.name] = new Float32Array(this.vars[s.name].dataSync());
    return out;
  }

  dispose(): void {
    for (const v of Object.values(this.vars)) v.dispose();
    for (const e of this.tCache.values()) e.t.dispose();
    this.tCache.clear();
    this.tCacheBytes = 0;
  }

  /** W [out, in] as [in, out] when a plain product may replace x·Wᵀ (see tCache), else null. */
  private transposedWeight(name: string): tf.Tensor2D | null {
    if (tf.getBackend() !== 'wasm') return null;
    const v = this.vars[name];
    if (v.trainable && !this.inferenceStep) return null;
    const hit = this.tCache.get(name);
    if (hit && hit.data === v.dataId) return hit.t;
    const bytes = 4 * v.size;
    if (!hit && this.tCacheBytes + bytes > TRANSPOSE_CACHE_BYTES) return null;
    if (hit) {
      hit.t.dispose();
      this.tCacheBytes -= bytes;
    }
    const t = tf.keep(tf.transpose(v as tf.Tensor2D)) as tf.Tensor2D;
    this.tCache.set(name, { data: v.dataId, t });
    this.tCacheBytes += bytes;
    return t;
  }

  private proj(module: string): (x: tf.Tensor2D) => tf.Tensor2D {
    const w = this.vars[`${module}.weight`];
    const b = this.vars[`${module}.bias`];
    const base = (x: tf.Tensor2D): tf.Tensor2D => {
      const wt = this.transposedWeight(`${module}.weight`);
      if (!wt) return linear(x, w, b);
      const y = tf.matMul(x, wt);
      return (b ? tf.add(y, b) : y) as tf.Tensor2D;
    };
    const hook = this.projectionHook;
    return hook ? (x) => hook(module, x, base) : base;
  }

  private layerParts(l: number): DecoderLayerParts {
    const p = `model.layers.${l}.`;
    const v = this.vars;
    return {
      inputNorm: v[`${p}input_layernorm.weight`],
      postAttentionNorm: v[`${p}post_attention_layernorm.weight`],
      attn: {
        q: this.proj(`${p}self_attn.q_proj`),
        k: this.proj(`${p}self_attn.k_proj`),
        v: this.proj(`${p}self_attn.v_proj`),
        o: this.proj(`${p}self_attn.o_proj`),
        qNorm: this.config.qkNorm ? v[`${p}self_attn.q_norm.weight`] : undefined,
        kNorm: this.config.qkNorm ? v[`${p}self_attn.k_norm.weight`] : undefined,
      },
      mlp: { gate: this.proj(`${p}mlp.gate_proj`), up: this.proj(`${p}mlp.up_proj`), down: this.proj(`${p}mlp.down_proj`) },
    };
  }

  private headName(): string {
    return this.config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
  }

  private head(h: tf.Tensor2D): tf.Tensor2D {
    const wt = this.transposedWeight(this.headName());
    return wt ? (tf.matMul(h, wt) as tf.Tensor2D) : lmHead(h, this.vars[this.headName()]);
  }

  private embed(ids: Int32Array): tf.Tensor2D {
    const E = this.vars['model.embed_tokens.weight'];
    const idx = tf.tensor1d(ids, 'int32');
    // gather's gradient is UnsortedSegmentSum, which stock tfjs-wasm lacks (the lab registers one, see
    // src/main/compute/wasmFixes.ts); without it, a one-hot matMul (fine for test-sized vocabularies only).
    if (tf.getKernel('UnsortedSegmentSum', tf.getBackend()) !== undefined) return tf.gather(E, idx) as tf.Tensor2D;
    return tf.matMul(tf.cast(tf.oneHot(idx, this.config.vocabSize), 'float32') as tf.Tensor2D, E as tf.Tensor2D);
  }

  /**
   * Final normalised hidden states [N·T, d] of ids [N, T] with per-row positions [N·T], an additive bias
   * [N, 1, T, P+T] and an optional cache. Returns the new cache too.
   */
  private run(
    ids: Int32Array,
    positions: Int32Array,
    N: number,
    T: number,
    bias: tf.Tensor4D,
    past: KvEntry[] | null,
  ): { h: tf.Tensor2D; present: KvEntry[] } {
    const cfg = this.config;
    for (const p of positions) {
      if (p >= cfg.maxPositionEmbeddings)
        throw new Error(`position ${p} is beyond max_position_embeddings ${cfg.maxPositionEmbeddings}; shorten the prompt or response`);
    }
    const { cos, sin } = ropeTables(this.freq, positions);
    const D = cfg.headDim;
    const cosT = tf.tensor4d(cos, [N, T, 1, D]);
    const sinT = tf.tensor4d(sin, [N, T, 1, D]);
    let x = this.embed(ids);
    const present: KvEntry[] = [];
    for (let l = 0; l < cfg.numLayers; l++) {
      const r = decoderLayer(cfg, this.layerParts(l), x, N, T, cosT, sinT, bias, past ? past[l] : null);
      x = r.out;
      present.push(r.present);
    }
    return { h: rmsNorm(x, this.vars['model.norm.weight'], cfg.rmsNormEps), present };
  }

  /**
   * Logits [N, T, V] of a padded batch. `mask` [N·T] (1 = real token, default all 1): pads are hidden as keys, and
   * positions count real tokens only (so left padding works; for right padding they are 0..T−1), as Transformers'
   * generate computes them.
   */
  forward(ids: Int32Array, N: number, T: number, mask?: Uint8Array): tf.Tensor3D {
    this.checkIds(ids);
    const m = mask ?? new Uint8Array(N * T).fill(1);
    const positions = positionsFromMask(m, N, T);
    return tf.tidy(() => {
      const bias = tf.tensor4d(causalBias(m, N, T, 0, T), [N, 1, T, T]);
      const { h } = this.run(ids, positions, N, T, bias, null);
      return tf.reshape(this.head(h), [N, T, this.config.vocabSize]) as tf.Tensor3D;
    });
  }

  /**
   * Differentiable per-token log-probs and entropies of each row's response given its prompt (teacher forcing),
   * right-padded to one length (causal attention keeps pads out of real tokens). Only the positions that predict a
   * response token go through the vocabulary projection. `temperature` divides the logits.
   */
  tokenLogProbs(rows: readonly LlmRow[], opts: { temperature?: number } = {}): LlmTokenLogProbs {
    const temperature = opts.temperature ?? 1;
    if (!(temperature > 0)) throw new Error(`tokenLogProbs: temperature must be > 0, got ${temperature}`);
    if (rows.length === 0) throw new Error('tokenLogProbs: no rows');
    const N = rows.length;
    const V = this.config.vocabSize;
    let T = 1;
    let R = 1;
    for (const r of rows) {
      if (r.promptIds.length < 1) throw new Error('tokenLogProbs: every prompt needs at least one token');
      T = Math.max(T, r.promptIds.length + r.responseIds.length - 1);
      R = Math.max(R, r.responseIds.length);
    }
    const ids = new Int32Array(N * T);
    const mask = new Uint8Array(N * T);
    const sel = new Float32Array(N * R * T);
    const target = new Int32Array(N * R);
    const rmask = new Float32Array(N * R);
    rows.forEach((r, i) => {
      const P = r.promptIds.length;
      const L = P + r.responseIds.length;
      for (let k = 0; k < L - 1; k++) {
        ids[i * T + k] = k < P ? r.promptIds[k] : r.responseIds[k - P];
        mask[i * T + k] = 1;
      }
      if (L - 1 === 0) mask[i * T] = 1; // a one-token prompt with no response still needs a real query
      for (let j = 0; j < r.responseIds.length; j++) {
        sel[(i * R + j) * T + (P - 1 + j)] = 1;
        target[i * R + j] = r.responseIds[j];
        rmask[i * R + j] = 1;
      }
    });
    this.checkIds(ids);
    for (const t of target) if (!(t >= 0 && t < V)) throw new Error(`tokenLogProbs: response token id ${t} outside [0, ${V})`);
    const positions = positionsFromMask(mask, N, T);
    return tf.tidy(() => {
      const bias = tf.tensor4d(causalBias(mask, N, T, 0, T), [N, 1, T, T]);
      const { h } = this.run(ids, positions, N, T, bias, null);
      const d = this.config.hiddenSize;
      // A 0/1 selection matMul picks the predicting positions: exact and differentiable on every backend.
      const picked = tf.reshape(tf.matMul(tf.tensor3d(sel, [N, R, T]), tf.reshape(h, [N, T, d])), [N * R, d]) as tf.Tensor2D;
      let logits = this.head(picked) as tf.Tensor;
      if (temperature !== 1) logits = tf.div(logits, temperature);
      const logp = tf.logSoftmax(logits);
      const m = tf.tensor2d(rmask, [N, R]);
      // The targets' log-probs: a gather from the flattened [N·R·V] log-probs where its gradient kernel exists (no
      // [N·R, V] one-hot: 1.2 GB for 2,048 response tokens of a 151,936-token vocabulary), else the one-hot product.
      let targetLogp: tf.Tensor;
      if (tf.getKernel('UnsortedSegmentSum', tf.getBackend()) !== undefined) {
        const flat = Int32Array.from(target, (t, k) => k * V + t);
        targetLogp = tf.gather(tf.reshape(logp, [N * R * V]), tf.tensor1d(flat, 'int32'));
      } else targetLogp = tf.sum(tf.mul(logp, tf.cast(tf.oneHot(tf.tensor1d(target, 'int32'), V), 'float32')), 1);
      return {
        logProbs: tf.mul(tf.reshape(targetLogp, [N, R]), m) as tf.Tensor2D,
        entropy: tf.mul(tf.reshape(tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)), [N, R]), m) as tf.Tensor2D,
        mask: m,
      };
    });
  }

  /**
   * One generation step: append S columns (ids, positions [B·S], bias [B·S·(P+S)]) to every row given the cache of
   * the P earlier columns. Returns the last column's logits [B, V] and the cache with the new columns; the caller
   * owns (and disposes) both.
   */
  step(
    ids: Int32Array,
    positions: Int32Array,
    bias: Float32Array,
    B: number,
    S: number,
    past: KvEntry[] | null,
  ): { logits: tf.Tensor2D; present: KvEntry[] } {
    this.checkIds(ids);
    this.inferenceStep = true;
    try {
      return this.stepTidy(ids, positions, bias, B, S, past);
    } finally {
      this.inferenceStep = false;
    }
  }

  private stepTidy(
    ids: Int32Array,
    positions: Int32Array,
    bias: Float32Array,
    B: number,
    S: number,
    past: KvEntry[] | null,
  ): { logits: tf.Tensor2D; present: KvEntry[] } {
    return tf.tidy(() => {
      const P = past ? past[0].k.shape[2] : 0;
      const { h, present } = this.run(ids, positions, B, S, tf.tensor4d(bias, [B, 1, S, P + S]), past);
      const d = this.config.hiddenSize;
      const last = tf.reshape(tf.slice(tf.reshape(h, [B, S, d]), [0, S - 1, 0], [B, 1, d]), [B, d]) as tf.Tensor2D;
      return { logits: this.head(last), present };
    });
  }

  private checkIds(ids: Int32Array): void {
    const V = this.config.vocabSize;
    for (const t of ids) if (!(t >= 0 && t < V)) throw new Error(`token id ${t} outside [0, ${V}) (vocab_size)`);
  }
}

/** Position of each column = number of real tokens before it in its row (0 for pads), as Transformers' generate. */
export function positionsFromMask(mask: Uint8Array, N: number, T: number): Int32Array {
  const pos = new Int32Array(N * T);
  for (let i = 0; i < N; i++) {
    let c = 0;
    for (let t = 0; t < T; t++) {
      pos[i * T + t] = mask[i * T + t] ? c : 0;
      if (mask[i * T + t]) c++;
    }
  }
  return pos;
}

/**
 * Additive bias [N, 1, S, P+S] for queries at columns P..P+S−1 over keys 0..P+S−1: 0 where the key is at or
 * before the query and real (`valid[i·stride + k]`), −1e9 elsewhere. The decoding loop's bias (agent/engine.ts
 * buildBias), one function for the sampler, the HF model's forward passes and the onnxruntime LLM engine.
 */
export const causalBias: (valid: Uint8Array, N: number, stride: number, P: number, S: number) => Float32Array = buildBias;
