/**
 * The policy: a pre-LayerNorm decoder-only transformer language model in tfjs (GPT-2 layout: learned token and
 * position embeddings, causal multi-head attention, GELU MLP, final LayerNorm, output projection tied to the
 * token embedding).
 *
 * Kernel choices follow ../shared/notes/stack.md so the same code is fast on tfjs-wasm:
 * - the token embedding is a one-hot matMul, not `gather` (gather's gradient needs UnsortedSegmentSum, which
 *   wasm lacks; with vocabularies of a few hundred the matMul is cheap);
 * - GELU's cube is x·x·x, never tf.pow;
 * - `tokenLogProbs` picks the response positions with a selection matMul, not gather, for the same reason.
 *
 * Initialisation draws from our seeded `Rng` (never tf.random, whose state is global): N(0, 0.02), residual
 * output projections scaled by 1/√(2·nLayers) (GPT-2), LayerNorm γ=1 β=0, biases 0.
 */
import * as tf from '@tensorflow/tfjs';
import type { Rng } from '../util/rng';
import { registerReductionGrads } from './reductionGrads';

export type ModelSize = 'nano' | 'small' | 'base' | 'custom';

export interface ModelShape {
  dModel: number;
  nLayers: number;
  nHeads: number;
  dFF: number;
  maxSeqLen: number;
}

/** How GELU is computed: one function, two float roundings (gelu below; RunConfig model.geluForm). */
export type GeluForm = 'sigmoid' | 'tanh';

export interface ModelConfig extends ModelShape {
  size: ModelSize;
  vocabSize: number;
  /**
   * How GELU is computed (RunConfig model.geluForm): 'sigmoid' x·σ(2u) or 'tanh' 0.5·x·(1 + tanh u), one function
   * in two float roundings. Absent (checkpoints written before the field) = 'tanh', what they were trained with.
   */
  geluForm?: GeluForm;
}

/**
 * Named sizes. Parameter counts are for a ~200-token vocabulary. maxSeqLen is each size's default context: nano's
 * covers a Sokoban prompt with the paper's 2-step history (≤ ~290 tokens) plus a response; run configs raise it
 * per environment (ENV_CATALOG contextTokens: shop prompts reach ~550 tokens at history 1) and the user may set it.
 */
export const MODEL_SIZES: Record<Exclude<ModelSize, 'custom'>, ModelShape & { why: string }> = {
  nano: { dModel: 64, nLayers: 2, nHeads: 4, dFF: 256, maxSeqLen: 384, why: '≈0.15M params: learns the format in minutes on a laptop CPU' },
  small: {
    dModel: 192,
    nLayers: 6,
    nHeads: 6,
    dFF: 768,
    maxSeqLen: 768,
    why: '≈2.8M params: the calibration "L" scale, slower but stronger',
  },
  base: { dModel: 384, nLayers: 6, nHeads: 6, dFF: 1536, maxSeqLen: 768, why: '≈11M params: for machines with tfjs-node or a GPU' },
};

/**
 * Resolve a model config: a named size fills every shape field (explicit fields override it); `custom` needs all
 * of them. Throws with the field, the value and the fix.
 */
export function resolveModelConfig(spec: { size: ModelSize; geluForm?: GeluForm } & Partial<ModelShape>, vocabSize: number): ModelConfig {
  let base: Partial<ModelShape>;
  if (spec.size === 'custom') base = {};
  else if (spec.size in MODEL_SIZES) {
    const { why: _why, ...shape } = MODEL_SIZES[spec.size];
    base = shape;
  } else {
    throw new Error(`model.size: unknown size ${JSON.stringify(spec.size)}; known sizes: nano, small, base, custom`);
  }
  const pick = (k: keyof ModelShape): number => {
    const v = spec[k] ?? base[k];
    if (v === undefined)
      throw new Error(`model.${k}: required for size "custom" (e.g. dModel 64, nLayers 2, nHeads 4, dFF 256, maxSeqLen 256)`);
    if (!Number.isInteger(v) || v <= 0) throw new Error(`model.${k}: must be a positive integer, got ${v}`);
    return v;
  };
  const cfg: ModelConfig = {
    size: spec.size,
    vocabSize,
    dModel: pick('dModel'),
    nLayers: pick('nLayers'),
    nHeads: pick('nHeads'),
    dFF: pick('dFF'),
    maxSeqLen: pick('maxSeqLen'),
    ...(spec.geluForm ? { geluForm: spec.geluForm } : {}),
  };
  if (!Number.isInteger(vocabSize) || vocabSize < 8)
    throw new Error(`model.vocabSize: must be an integer ≥ 8 (the special tokens), got ${vocabSize}`);
  if (cfg.dModel % cfg.nHeads !== 0) {
    throw new Error(
      `model.nHeads: dModel ${cfg.dModel} must be divisible by nHeads ${cfg.nHeads}; pick nHeads from the divisors of dModel`,
    );
  }
  return cfg;
}

export interface WeightSpec {
  name: string;
  shape: number[];
  init: 'normal' | 'residual' | 'zeros' | 'ones';
}

/** Every tensor of the model, in the fixed order used by serialisation and the ONNX export. */
export function weightSpecs(cfg: ModelConfig): WeightSpec[] {
  const d = cfg.dModel;
  const f = cfg.dFF;
  const specs: WeightSpec[] = [
    { name: 'wte', shape: [cfg.vocabSize, d], init: 'normal' },
    { name: 'wpe', shape: [cfg.maxSeqLen, d], init: 'normal' },
  ];
  for (let l = 0; l < cfg.nLayers; l++) {
    const p = `h${l}.`;
    specs.push(
      { name: `${p}ln1.g`, shape: [d], init: 'ones' },
      { name: `${p}ln1.b`, shape: [d], init: 'zeros' },
      { name: `${p}attn.wqkv`, shape: [d, 3 * d], init: 'normal' },
      { name: `${p}attn.bqkv`, shape: [3 * d], init: 'zeros' },
      { name: `${p}attn.wo`, shape: [d, d], init: 'residual' },
      { name: `${p}attn.bo`, shape: [d], init: 'zeros' },
      { name: `${p}ln2.g`, shape: [d], init: 'ones' },
      { name: `${p}ln2.b`, shape: [d], init: 'zeros' },
      { name: `${p}mlp.w1`, shape: [d, f], init: 'normal' },
      { name: `${p}mlp.b1`, shape: [f], init: 'zeros' },
      { name: `${p}mlp.w2`, shape: [f, d], init: 'residual' },
      { name: `${p}mlp.b2`, shape: [d], init: 'zeros' },
    );
  }
  specs.push({ name: 'lnf.g', shape: [d], init: 'ones' }, { name: 'lnf.b', shape: [d], init: 'zeros' });
  return specs;
}

export function paramCount(cfg: ModelConfig): number {
  return weightSpecs(cfg).reduce((s, w) => s + w.shape.reduce((a, b) => a * b, 1), 0);
}

/** Plain-array weights (host memory): what engines, checkpoints and the ONNX export exchange. */
export interface ModelWeights {
  config: ModelConfig;
  tensors: Record<string, Float32Array>;
}

/** Seeded initial weights. */
export function initWeights(cfg: ModelConfig, rng: Rng): ModelWeights {
  const tensors: Record<string, Float32Array> = {};
  const residualStd = 0.02 / Math.sqrt(2 * cfg.nLayers);
  for (const spec of weightSpecs(cfg)) {
    const n = spec.shape.reduce((a, b) => a * b, 1);
    const a = new Float32Array(n);
    if (spec.init === 'ones') a.fill(1);
    else if (spec.init === 'normal' || spec.init === 'residual') {
      const std = spec.init === 'normal' ? 0.02 : residualStd;
      for (let i = 0; i < n; i++) a[i] = rng.normal() * std;
    }
    tensors[spec.name] = a;
  }
  return { config: { ...cfg }, tensors };
}

/** A (prompt, response) pair: the unit of log-prob computation. */
export interface LogProbRow {
  promptIds: ArrayLike<number>;
  responseIds: ArrayLike<number>;
}

export interface TokenLogProbs {
  /** log π(response token j | prefix) of row i at [i, j]; 0 where mask is 0. Shape [N, R], R = longest response. */
  logProbs: tf.Tensor2D;
  /** Entropy (nats) of the policy at the position predicting response token j. Shape [N, R]. */
  entropy: tf.Tensor2D;
  /** 1 for real response tokens, 0 for padding. Shape [N, R]. */
  mask: tf.Tensor2D;
}

export interface ForwardOptions {
  /** Position ids [N, T] (int32); default 0..T-1 for every row. Needed for left-padded batches (generation). */
  positions?: tf.Tensor2D;
  /** Additive attention bias broadcastable to [N, nHeads, T, T]; default causal. 0 = attend, −1e9 = masked. */
  bias?: tf.Tensor;
}

const NEG = -1e9;

export class PolicyModel {
  readonly config: ModelConfig;
  readonly vars: Record<string, tf.Variable>;
  private causalCache = new Map<number, tf.Tensor2D>();

  /** Variable-name prefix (tfjs variable names are global): `<prefix>/<tensor name>`. */
  readonly name: string;

  private constructor(cfg: ModelConfig, weights: ModelWeights, name: string) {
    // LayerNorm's mean gradients without input-sized ones tensors, the same bits (reductionGrads.ts).
    registerReductionGrads();
    this.config = { ...cfg };
    this.name = freeName(name);
    this.vars = {};
    for (const spec of weightSpecs(cfg)) {
      const data = weights.tensors[spec.name];
      checkTensor(spec, data);
      this.vars[spec.name] = tf.variable(tf.tensor(data, spec.shape, 'float32'), true, `${this.name}/${spec.name}`);
    }
  }

  /**
   * A new model with seeded initial weights. `name` prefixes the tfjs variable names (default `policy`; give the
   * reference model e.g. `ref`). If the name is taken by a live model, `_2`, `_3`, … is appended.
   */
  static create(cfg: ModelConfig, rng: Rng, name = 'policy'): PolicyModel {
    return new PolicyModel(cfg, initWeights(cfg, rng), name);
  }

  static fromWeights(weights: ModelWeights, name = 'policy'): PolicyModel {
    return new PolicyModel(weights.config, weights, name);
  }

  /** Trainable variables in spec order (for tf.variableGrads / optimisers). */
  trainableVariables(): tf.Variable[] {
    return weightSpecs(this.config).map((s) => this.vars[s.name]);
  }

  paramCount(): number {
    return paramCount(this.config);
  }

  /** Copy of the current weights into host memory. */
  getWeights(): ModelWeights {
    const tensors: Record<string, Float32Array> = {};
    for (const spec of weightSpecs(this.config)) tensors[spec.name] = new Float32Array(this.vars[spec.name].dataSync());
    return { config: { ...this.config }, tensors };
  }

  setWeights(w: ModelWeights): void {
    const a = this.config;
    const b = w.config;
    if (
      a.vocabSize !== b.vocabSize ||
      a.dModel !== b.dModel ||
      a.nLayers !== b.nLayers ||
      a.nHeads !== b.nHeads ||
      a.dFF !== b.dFF ||
      a.maxSeqLen !== b.maxSeqLen
    ) {
      throw new Error(`setWeights: config mismatch (model ${JSON.stringify(a)} vs weights ${JSON.stringify(b)})`);
    }
    for (const spec of weightSpecs(a)) {
      const data = w.tensors[spec.name];
      checkTensor(spec, data);
      tf.tidy(() => this.vars[spec.name].assign(tf.tensor(data, spec.shape, 'float32')));
    }
  }

  dispose(): void {
    for (const v of Object.values(this.vars)) v.dispose();
    for (const t of this.causalCache.values()) t.dispose();
    this.causalCache.clear();
  }

  private causal(t: number): tf.Tensor2D {
    let m = this.causalCache.get(t);
    if (!m) {
      const data = new Float32Array(t * t);
      for (let i = 0; i < t; i++) for (let j = i + 1; j < t; j++) data[i * t + j] = NEG;
      m = tf.keep(tf.tensor2d(data, [t, t]));
      this.causalCache.set(t, m);
    }
    return m;
  }

  /** Final hidden states [N·T, d] (after the last LayerNorm). */
  private hidden(ids: tf.Tensor2D, opts: ForwardOptions): tf.Tensor2D {
    const { dModel: d, nHeads: H, nLayers, vocabSize: V } = this.config;
    const [N, T] = ids.shape;
    if (T > this.config.maxSeqLen) throw new Error(`forward: sequence length ${T} exceeds maxSeqLen ${this.config.maxSeqLen}`);
    const dh = d / H;
    const v = this.vars;
    const flat = tf.reshape(ids, [N * T]);
    // gather is cheaper than a one-hot matMul, but its gradient needs UnsortedSegmentSum, which stock wasm lacks
    // (src/main/compute registers one); without it, embed with the one-hot matMul.
    let x = (canGatherGrad() ? tf.gather(v.wte, flat) : tf.matMul(oneHotFloat(flat, V), v.wte)) as tf.Tensor2D;
    if (opts.positions) {
      x = tf.add(x, tf.gather(v.wpe, tf.reshape(opts.positions, [N * T]))) as tf.Tensor2D;
    } else {
      const pos = tf.slice(v.wpe, [0, 0], [T, d]);
      x = tf.reshape(tf.add(tf.reshape(x, [N, T, d]), pos), [N * T, d]) as tf.Tensor2D;
    }
    const bias = opts.bias ?? this.causal(T);
    const scale = 1 / Math.sqrt(dh);
    const heads = (m: tf.Tensor): tf.Tensor4D => tf.transpose(tf.reshape(m, [N, T, H, dh]), [0, 2, 1, 3]) as tf.Tensor4D;
    for (let l = 0; l < nLayers; l++) {
      const p = `h${l}.`;
      const a = layerNorm(x, v[`${p}ln1.g`], v[`${p}ln1.b`]);
      const qkv = tf.add(tf.matMul(a, v[`${p}attn.wqkv`]), v[`${p}attn.bqkv`]);
      const [q, k, vv] = tf.split(qkv, 3, 1);
      // Scale q ([N·T, d]) rather than the scores ([N, H, T, T]): one elementwise op on far fewer values.
      const scores = tf.add(tf.matMul(heads(tf.mul(q, scale)), heads(k), false, true), bias);
      const probs = tf.softmax(scores);
      const ctx = tf.reshape(tf.transpose(tf.matMul(probs, heads(vv)), [0, 2, 1, 3]), [N * T, d]);
      x = tf.add(x, tf.add(tf.matMul(ctx, v[`${p}attn.wo`]), v[`${p}attn.bo`])) as tf.Tensor2D;
      const b = layerNorm(x, v[`${p}ln2.g`], v[`${p}ln2.b`]);
      const h1 = gelu(tf.add(tf.matMul(b, v[`${p}mlp.w1`]), v[`${p}mlp.b1`]), this.config.geluForm);
      x = tf.add(x, tf.add(tf.matMul(h1, v[`${p}mlp.w2`]), v[`${p}mlp.b2`])) as tf.Tensor2D;
    }
    return layerNorm(x, v['lnf.g'], v['lnf.b']);
  }

  /**
   * One incremental step with a key/value cache (generation): append S columns to every row given the cached keys
   * and values of the earlier columns. `bias` [B, 1, S, P+S] is the additive attention bias (causality and padding,
   * built by the caller). Returns the logits of the last appended column [B, V] and the cache including the new
   * columns (the caller owns and disposes both).
   */
  forwardCached(
    ids: tf.Tensor2D,
    positions: tf.Tensor2D,
    bias: tf.Tensor4D,
    past: ReadonlyArray<{ k: tf.Tensor4D; v: tf.Tensor4D }> | null,
  ): { logits: tf.Tensor2D; present: Array<{ k: tf.Tensor4D; v: tf.Tensor4D }> } {
    return tf.tidy(() => {
      const { dModel: d, nHeads: H, nLayers } = this.config;
      const [B, S] = ids.shape;
      const dh = d / H;
      const v = this.vars;
      let x = tf.add(tf.gather(v.wte, tf.reshape(ids, [B * S])), tf.gather(v.wpe, tf.reshape(positions, [B * S]))) as tf.Tensor2D;
      const heads = (m: tf.Tensor): tf.Tensor4D => tf.transpose(tf.reshape(m, [B, S, H, dh]), [0, 2, 1, 3]) as tf.Tensor4D;
      const present: Array<{ k: tf.Tensor4D; v: tf.Tensor4D }> = [];
      for (let l = 0; l < nLayers; l++) {
        const p = `h${l}.`;
        const a = layerNorm(x, v[`${p}ln1.g`], v[`${p}ln1.b`]);
        const [q, k, vv] = tf.split(tf.add(tf.matMul(a, v[`${p}attn.wqkv`]), v[`${p}attn.bqkv`]), 3, 1);
        let kAll = heads(k);
        let vAll = heads(vv);
        if (past) {
          kAll = tf.concat([past[l].k, kAll], 2);
          vAll = tf.concat([past[l].v, vAll], 2);
        }
        present.push({ k: kAll, v: vAll });
        const scores = tf.add(tf.matMul(heads(tf.mul(q, 1 / Math.sqrt(dh))), kAll, false, true), bias);
        const ctx = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), vAll), [0, 2, 1, 3]), [B * S, d]);
        x = tf.add(x, tf.add(tf.matMul(ctx, v[`${p}attn.wo`]), v[`${p}attn.bo`])) as tf.Tensor2D;
        const b = layerNorm(x, v[`${p}ln2.g`], v[`${p}ln2.b`]);
        const h1 = gelu(tf.add(tf.matMul(b, v[`${p}mlp.w1`]), v[`${p}mlp.b1`]), this.config.geluForm);
        x = tf.add(x, tf.add(tf.matMul(h1, v[`${p}mlp.w2`]), v[`${p}mlp.b2`])) as tf.Tensor2D;
      }
      const last = tf.reshape(tf.slice(tf.reshape(x, [B, S, d]), [0, S - 1, 0], [B, 1, d]), [B, d]) as tf.Tensor2D;
      const hf = layerNorm(last, v['lnf.g'], v['lnf.b']);
      return { logits: tf.matMul(hf, v.wte, false, true) as tf.Tensor2D, present };
    });
  }

  /** Logits [N, T, V] for token ids [N, T] (int32). */
  forward(ids: tf.Tensor2D, opts: ForwardOptions = {}): tf.Tensor3D {
    return tf.tidy(() => {
      const [N, T] = ids.shape;
      const h = this.hidden(ids, opts);
      return tf.reshape(tf.matMul(h, this.vars.wte, false, true), [N, T, this.config.vocabSize]) as tf.Tensor3D;
    });
  }

  /**
   * Differentiable per-token log-probs and entropies of each row's response given its prompt (teacher forcing),
   * for use inside tf.variableGrads. Rows are right-padded to one length; with causal attention the padding never
   * influences real tokens, so positions are simply 0..T-1. `temperature` divides the logits (use the rollout
   * temperature so the ratio matches the behaviour policy; default 1).
   */
  tokenLogProbs(rows: readonly LogProbRow[], opts: { temperature?: number } = {}): TokenLogProbs {
    const temperature = opts.temperature ?? 1;
    if (!(temperature > 0)) throw new Error(`tokenLogProbs: temperature must be > 0, got ${temperature}`);
    if (rows.length === 0) throw new Error('tokenLogProbs: no rows');
    const N = rows.length;
    let T = 0;
    let R = 0;
    for (const r of rows) {
      if (r.promptIds.length < 1) throw new Error('tokenLogProbs: every prompt needs at least one token (<bos>)');
      T = Math.max(T, r.promptIds.length + r.responseIds.length - 1);
      R = Math.max(R, r.responseIds.length);
    }
    R = Math.max(R, 1);
    if (T > this.config.maxSeqLen) {
      throw new Error(
        `tokenLogProbs: a row of ${T + 1} tokens exceeds maxSeqLen ${this.config.maxSeqLen}; truncate prompts in the rollout`,
      );
    }
    const V = this.config.vocabSize;
    const input = new Int32Array(N * T);
    const target = new Int32Array(N * R);
    const sel = new Float32Array(N * R * T);
    const mask = new Float32Array(N * R);
    rows.forEach((r, i) => {
      const P = r.promptIds.length;
      const L = P + r.responseIds.length;
      const at = (k: number): number => (k < P ? r.promptIds[k] : r.responseIds[k - P]);
      for (let k = 0; k < L; k++) {
        const a = at(k);
        if (!(a >= 0 && a < V)) throw new Error(`tokenLogProbs: row ${i} has token id ${a} outside [0, ${V})`);
        if (k < L - 1) input[i * T + k] = a;
      }
      for (let j = 0; j < r.responseIds.length; j++) {
        sel[(i * R + j) * T + (P - 1 + j)] = 1;
        target[i * R + j] = r.responseIds[j];
        mask[i * R + j] = 1;
      }
    });
    return tf.tidy(() => {
      const d = this.config.dModel;
      const ids = tf.tensor2d(input, [N, T], 'int32');
      const h = tf.reshape(this.hidden(ids, {}), [N, T, d]);
      // Only the positions that predict response tokens go through the vocabulary projection and the softmax:
      // responses are ~10 % of a row, and the [rows, V] tensors are the largest of the step. The selection is a
      // matMul with a 0/1 matrix (differentiable on every backend, unlike gather on wasm).
      const picked = tf.reshape(tf.matMul(tf.tensor3d(sel, [N, R, T]), h), [N * R, d]);
      let logits = tf.matMul(picked, this.vars.wte, false, true);
      if (temperature !== 1) logits = tf.div(logits, temperature);
      const logp = tf.logSoftmax(logits);
      const tgt = oneHotFloat(tf.tensor1d(target, 'int32'), V);
      const m = tf.tensor2d(mask, [N, R]);
      return {
        logProbs: tf.mul(tf.reshape(tf.sum(tf.mul(logp, tgt), 1), [N, R]), m) as tf.Tensor2D,
        entropy: tf.mul(tf.reshape(tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)), [N, R]), m) as tf.Tensor2D,
        mask: m,
      };
    });
  }
}

/**
 * One-hot as float32. tfjs-backend-wasm 4.22 returns all zeros for `tf.oneHot(…, 'float32')`, so the int32
 * one-hot is cast instead (found by comparing wasm against cpu op by op).
 */
function oneHotFloat(ids: tf.Tensor, depth: number): tf.Tensor {
  return tf.cast(tf.oneHot(ids, depth), 'float32');
}

function canGatherGrad(): boolean {
  return tf.getKernel('UnsortedSegmentSum', tf.getBackend()) !== undefined;
}

function freeName(base: string): string {
  const registered = tf.engine().registeredVariables;
  const taken = (n: string): boolean => Object.keys(registered).some((k) => k.startsWith(`${n}/`));
  if (!taken(base)) return base;
  for (let i = 2; ; i++) if (!taken(`${base}_${i}`)) return `${base}_${i}`;
}

function checkTensor(spec: WeightSpec, data: Float32Array | undefined): void {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  if (!(data instanceof Float32Array)) throw new Error(`weights: tensor "${spec.name}" is missing`);
  if (data.length !== n) throw new Error(`weights: tensor "${spec.name}" has ${data.length} values, expected ${n} (shape [${spec.shape}])`);
}

function layerNorm(x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  const mean = tf.mean(x, -1, true);
  const xc = tf.sub(x, mean);
  const variance = tf.mean(tf.mul(xc, xc), -1, true);
  return tf.add(tf.mul(tf.mul(xc, tf.rsqrt(tf.add(variance, 1e-5))), g), b) as tf.Tensor2D;
}

/**
 * GELU, tanh approximation (GPT-2): 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³). 'sigmoid' computes it as
 * x·σ(2u), the same function (½(1 + tanh u) = σ(2u)) in two ops fewer: on wasm, Tanh is a scalar loop (46 ms for
 * a [5728, 256] activation) where Sigmoid is vectorised (6 ms), and a 32-row forward pass at history 0 took
 * 312 ms with tanh. 'tanh' (absent = checkpoints and configs from before the choice) keeps the old
 * arithmetic bit for bit. The cube as x·x·x (tf.pow is slow on wasm).
 */
function gelu(x: tf.Tensor, form: GeluForm = 'tanh'): tf.Tensor {
  const cube = tf.mul(tf.mul(x, x), x);
  if (form === 'sigmoid') return tf.mul(x, tf.sigmoid(tf.mul(tf.add(x, tf.mul(cube, 0.044715)), 2 * Math.sqrt(2 / Math.PI))));
  const inner = tf.mul(tf.add(x, tf.mul(cube, 0.044715)), Math.sqrt(2 / Math.PI));
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1));
}
