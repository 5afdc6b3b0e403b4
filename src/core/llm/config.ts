/**
 * The architecture of a pretrained Hugging Face causal LM, read from its `config.json`.
 *
 * Supported: Qwen2ForCausalLM, Qwen3ForCausalLM and LlamaForCausalLM — one decoder family (pre-RMSNorm, rotary
 * position embeddings, grouped-query attention, SwiGLU MLP) that differs only in the fields below:
 *   - Qwen2: biases on the q/k/v projections (never on o), head_dim = hidden_size / num_attention_heads;
 *   - Qwen3: `attention_bias` on q/k/v/o (false in the released models), an explicit `head_dim` (which need not equal
 *     hidden_size / heads), and an RMSNorm over head_dim applied to each head's queries and keys before the rotary
 *     embedding (`self_attn.q_norm` / `self_attn.k_norm`);
 *   - Llama: `attention_bias` on q/k/v/o, `mlp_bias` on the MLP, optional `head_dim`.
 * Every field is checked here, with the field, the value and the fix, so a bad folder is refused before any weight is
 * read. Pure: JSON in, config out.
 */
export const LLM_ARCHITECTURES = ['Qwen2ForCausalLM', 'Qwen3ForCausalLM', 'LlamaForCausalLM'] as const;
export type LlmArchitecture = (typeof LLM_ARCHITECTURES)[number];

/** Rotary-embedding frequency schedules (config.json `rope_scaling.rope_type`, formerly `type`). */
export const ROPE_TYPES = ['default', 'linear', 'llama3', 'yarn'] as const;
export type RopeType = (typeof ROPE_TYPES)[number];

export type RopeScaling =
  | { type: 'default' }
  /** Position interpolation: every frequency divided by `factor`. */
  | { type: 'linear'; factor: number }
  /** Llama 3.1: low frequencies divided by `factor`, high kept, a smooth ramp between. */
  | { type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositionEmbeddings: number }
  /** YaRN (Qwen's long-context setting): per-dimension blend of interpolation and extrapolation, cos/sin scaled. */
  | { type: 'yarn'; factor: number; originalMaxPositionEmbeddings: number; betaFast: number; betaSlow: number; attentionFactor: number };

export interface LlmConfig {
  architecture: LlmArchitecture;
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediateSize: number;
  rmsNormEps: number;
  ropeTheta: number;
  rope: RopeScaling;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  /** Qwen3: RMSNorm over head_dim on queries and keys. */
  qkNorm: boolean;
  /** Biases on the q, k and v projections. */
  qkvBias: boolean;
  /** Bias on the output projection. */
  oBias: boolean;
  /** Biases on gate/up/down. */
  mlpBias: boolean;
  bosTokenId: number | null;
  /** config.json eos_token_id (one id or a list). */
  eosTokenIds: number[];
}

export class LlmConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LlmConfigError';
  }
}

type Json = Record<string, unknown>;

function fail(field: string, value: unknown, fix: string): never {
  throw new LlmConfigError(`config.json: ${field} ${value === undefined ? 'is missing' : `= ${JSON.stringify(value)} is invalid`}; ${fix}`);
}

function posInt(c: Json, k: string): number {
  const v = c[k];
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) fail(k, v, 'expected a positive integer');
  return v;
}

function posNum(c: Json, k: string, dflt?: number): number {
  const v = c[k] ?? dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(k, v, 'expected a positive number');
  return v;
}

function bool(c: Json, k: string, dflt: boolean): boolean {
  const v = c[k] ?? dflt;
  if (typeof v !== 'boolean') fail(k, v, 'expected true or false');
  return v;
}

function tokenIds(v: unknown, k: string): number[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  for (const t of list)
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 0) fail(k, v, 'expected a token id or a list of token ids');
  return list as number[];
}

function parseRope(c: Json): RopeScaling {
  const rs = c.rope_scaling;
  if (rs === undefined || rs === null) return { type: 'default' };
  if (typeof rs !== 'object' || Array.isArray(rs)) fail('rope_scaling', rs, 'expected an object with rope_type or null');
  const r = rs as Json;
  const type = (r.rope_type ?? r.type) as string | undefined;
  const num = (k: string, dflt?: number): number => {
    const v = r[k] ?? dflt;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(`rope_scaling.${k}`, v, 'expected a positive number');
    return v;
  };
  const maxPos = (): number =>
    num('original_max_position_embeddings', typeof c.max_position_embeddings === 'number' ? c.max_position_embeddings : undefined);
  switch (type) {
    case 'default':
      return { type: 'default' };
    case 'linear':
      return { type: 'linear', factor: num('factor') };
    case 'llama3':
      return {
        type: 'llama3',
        factor: num('factor'),
        lowFreqFactor: num('low_freq_factor'),
        highFreqFactor: num('high_freq_factor'),
        originalMaxPositionEmbeddings: num('original_max_position_embeddings'),
      };
    case 'yarn': {
      // As Transformers ≥ 4.51 (the versions with Qwen3) read it: with original_max_position_embeddings, the scale is
      // max_position_embeddings / original_max_position_embeddings and `factor` is not used; without it, `factor` over
      // max_position_embeddings (Transformers 4.44 always read it this way). Qwen's long-context instructions set
      // both consistently (factor 4, original 32768, max 131072), where the two readings agree.
      const hasOriginal = r.original_max_position_embeddings !== undefined && r.original_max_position_embeddings !== null;
      const factor = hasOriginal ? posInt(c, 'max_position_embeddings') / maxPos() : num('factor');
      if (!(factor > 0)) fail('rope_scaling.factor', factor, 'expected a positive number');
      const af = r.attention_factor;
      return {
        type: 'yarn',
        factor,
        originalMaxPositionEmbeddings: maxPos(),
        betaFast: num('beta_fast', 32),
        betaSlow: num('beta_slow', 1),
        attentionFactor: af === undefined || af === null ? (factor <= 1 ? 1 : 0.1 * Math.log(factor) + 1) : num('attention_factor'),
      };
    }
    default:
      return fail('rope_scaling.rope_type', type, `supported: ${ROPE_TYPES.join(', ')} (dynamic, longrope and others are not implemented)`);
  }
}

/** Parse and validate a config.json object. */
export function parseLlmConfig(json: unknown): LlmConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new LlmConfigError('config.json: expected a JSON object');
  const c = json as Json;
  const archs = c.architectures;
  if (!Array.isArray(archs) || archs.length !== 1 || typeof archs[0] !== 'string') {
    fail('architectures', archs, `expected one of ${LLM_ARCHITECTURES.join(', ')} in a one-element list`);
  }
  const architecture = archs[0] as string;
  if (!(LLM_ARCHITECTURES as readonly string[]).includes(architecture)) {
    throw new LlmConfigError(
      `config.json: architecture ${JSON.stringify(architecture)} is not supported; supported: ${LLM_ARCHITECTURES.join(', ')}`,
    );
  }
  const arch = architecture as LlmArchitecture;
  const act = c.hidden_act ?? 'silu';
  if (act !== 'silu') fail('hidden_act', act, 'only "silu" (SwiGLU) is implemented');
  if (c.use_sliding_window === true)
    fail('use_sliding_window', true, 'sliding-window attention is not implemented; set it to false (full attention)');
  if ((c.pretraining_tp ?? 1) !== 1)
    fail('pretraining_tp', c.pretraining_tp, 'expected 1 (only affects how PyTorch splits matmuls; set it to 1)');
  const hiddenSize = posInt(c, 'hidden_size');
  const numHeads = posInt(c, 'num_attention_heads');
  const numKvHeads = c.num_key_value_heads === undefined || c.num_key_value_heads === null ? numHeads : posInt(c, 'num_key_value_heads');
  if (numHeads % numKvHeads !== 0) fail('num_key_value_heads', numKvHeads, `must divide num_attention_heads (${numHeads})`);
  let headDim: number;
  if (c.head_dim !== undefined && c.head_dim !== null) headDim = posInt(c, 'head_dim');
  else {
    if (hiddenSize % numHeads !== 0)
      fail('num_attention_heads', numHeads, `must divide hidden_size (${hiddenSize}) when head_dim is not given`);
    headDim = hiddenSize / numHeads;
  }
  if (headDim % 2 !== 0) fail('head_dim', headDim, 'must be even (rotary embeddings rotate pairs)');
  if (c.partial_rotary_factor !== undefined && c.partial_rotary_factor !== 1)
    fail('partial_rotary_factor', c.partial_rotary_factor, 'only 1 (rotate the whole head) is implemented');
  const attentionBias = bool(c, 'attention_bias', false);
  return {
    architecture: arch,
    vocabSize: posInt(c, 'vocab_size'),
    hiddenSize,
    numLayers: posInt(c, 'num_hidden_layers'),
    numHeads,
    numKvHeads,
    headDim,
    intermediateSize: posInt(c, 'intermediate_size'),
    rmsNormEps: posNum(c, 'rms_norm_eps', 1e-6),
    ropeTheta: posNum(c, 'rope_theta', 10000),
    rope: parseRope(c),
    maxPositionEmbeddings: posInt(c, 'max_position_embeddings'),
    tieWordEmbeddings: bool(c, 'tie_word_embeddings', arch === 'LlamaForCausalLM' ? false : true),
    qkNorm: arch === 'Qwen3ForCausalLM',
    qkvBias: arch === 'Qwen2ForCausalLM' ? true : attentionBias,
    oBias: arch === 'Qwen2ForCausalLM' ? false : attentionBias,
    mlpBias: arch === 'LlamaForCausalLM' ? bool(c, 'mlp_bias', false) : false,
    bosTokenId: tokenIds(c.bos_token_id, 'bos_token_id')[0] ?? null,
    eosTokenIds: tokenIds(c.eos_token_id, 'eos_token_id'),
  };
}

/** One tensor of the checkpoint: its Hugging Face name and shape (PyTorch layout: Linear weights are [out, in]). */
export interface LlmWeightSpec {
  name: string;
  shape: number[];
  /** How a freshly initialised tensor starts (tests and random-weight benchmarks). */
  init: 'normal' | 'ones' | 'zeros';
}

/** Every tensor the model needs, in a fixed order (names exactly as in Transformers' state dict). */
export function llmWeightSpecs(cfg: LlmConfig): LlmWeightSpec[] {
  const { hiddenSize: d, headDim: hd, numHeads: H, numKvHeads: KV, intermediateSize: f, vocabSize: V } = cfg;
  const specs: LlmWeightSpec[] = [{ name: 'model.embed_tokens.weight', shape: [V, d], init: 'normal' }];
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}.`;
    specs.push({ name: `${p}input_layernorm.weight`, shape: [d], init: 'ones' });
    for (const [n, rows] of [
      ['q', H * hd],
      ['k', KV * hd],
      ['v', KV * hd],
    ] as const) {
      specs.push({ name: `${p}self_attn.${n}_proj.weight`, shape: [rows, d], init: 'normal' });
      if (cfg.qkvBias) specs.push({ name: `${p}self_attn.${n}_proj.bias`, shape: [rows], init: 'zeros' });
    }
    specs.push({ name: `${p}self_attn.o_proj.weight`, shape: [d, H * hd], init: 'normal' });
    if (cfg.oBias) specs.push({ name: `${p}self_attn.o_proj.bias`, shape: [d], init: 'zeros' });
    if (cfg.qkNorm) {
      specs.push(
        { name: `${p}self_attn.q_norm.weight`, shape: [hd], init: 'ones' },
        { name: `${p}self_attn.k_norm.weight`, shape: [hd], init: 'ones' },
      );
    }
    specs.push({ name: `${p}post_attention_layernorm.weight`, shape: [d], init: 'ones' });
    for (const [n, shape] of [
      ['gate', [f, d]],
      ['up', [f, d]],
      ['down', [d, f]],
    ] as const) {
      specs.push({ name: `${p}mlp.${n}_proj.weight`, shape: [...shape], init: 'normal' });
      if (cfg.mlpBias) specs.push({ name: `${p}mlp.${n}_proj.bias`, shape: [shape[0]], init: 'zeros' });
    }
  }
  specs.push({ name: 'model.norm.weight', shape: [d], init: 'ones' });
  if (!cfg.tieWordEmbeddings) specs.push({ name: 'lm_head.weight', shape: [V, d], init: 'normal' });
  return specs;
}

export function llmParamCount(cfg: LlmConfig): number {
  return llmWeightSpecs(cfg).reduce((s, w) => s + w.shape.reduce((a, b) => a * b, 1), 0);
}
