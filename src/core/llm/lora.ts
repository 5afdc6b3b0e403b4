/**
 * LoRA adapters (Hu et al. 2021) on the linear layers of an HfCausalLM: W x + (α/r) · B A dropout(x), with A [r, in]
 * and B [out, r]; the base weights stay frozen and only A and B are trained and checkpointed.
 *
 * Conventions follow PEFT, so that adapters move both ways between the lab and Hugging Face tooling:
 *   - A starts uniform in ±1/√in (PEFT's default Kaiming-uniform with a = √5), B at zero: the adapted model starts
 *     equal to the base;
 *   - dropout applies to the adapter's input only, and only while training (given an Rng: the mask is seeded);
 *   - saved tensor names are `base_model.model.<module>.lora_A.weight` / `.lora_B.weight`, with an adapter_config.json
 *     (peft_type LORA, r, lora_alpha, lora_dropout, target_modules).
 * A merged export (W + (α/r)·B·A) gives plain checkpoint tensors on request.
 */
import * as tf from '@tensorflow/tfjs';
import type { Rng } from '../util/rng';
import type { HfCausalLM, LlmTensors } from './causalLm';
import type { LlmConfig } from './config';

/** Linear layers LoRA can target (names as in the checkpoints and in PEFT's target_modules). */
export const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];
const MLP_TARGETS = new Set<LoraTarget>(['gate_proj', 'up_proj', 'down_proj']);

export interface LoraSettings {
  /** Adapter rank r (8–64 typical); more = more capacity and memory. */
  rank: number;
  /** Scale numerator: the update is multiplied by alpha / rank (commonly 2·rank). */
  alpha: number;
  /** Dropout on the adapter input while training, in [0, 1). */
  dropout: number;
  /** Which linear layers get adapters. */
  targetModules: LoraTarget[];
}

export const DEFAULT_LORA: LoraSettings = { rank: 16, alpha: 32, dropout: 0.05, targetModules: [...LORA_TARGETS] };

export function validateLora(s: LoraSettings): LoraSettings {
  if (!Number.isInteger(s.rank) || s.rank < 1) throw new Error(`lora.rank: must be an integer ≥ 1, got ${s.rank}`);
  if (!(s.alpha > 0) || !Number.isFinite(s.alpha)) throw new Error(`lora.alpha: must be > 0, got ${s.alpha}`);
  if (!(s.dropout >= 0 && s.dropout < 1)) throw new Error(`lora.dropout: must be in [0, 1), got ${s.dropout}`);
  if (s.targetModules.length === 0) throw new Error(`lora.targetModules: give at least one of ${LORA_TARGETS.join(', ')}`);
  for (const t of s.targetModules) {
    if (!(LORA_TARGETS as readonly string[]).includes(t))
      throw new Error(`lora.targetModules: unknown module ${JSON.stringify(t)}; known: ${LORA_TARGETS.join(', ')}`);
  }
  return s;
}

/**
 * Parse the CLI form `r=16,alpha=32,dropout=0.05,targets=q_proj+v_proj` (every key optional; defaults DEFAULT_LORA).
 */
export function parseLoraSpec(spec: string): LoraSettings {
  const out: LoraSettings = { ...DEFAULT_LORA, targetModules: [...DEFAULT_LORA.targetModules] };
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [k, v, ...rest] = part.split('=');
    if (v === undefined || rest.length)
      throw new Error(`--lora: "${part}" is not key=value (e.g. r=16,alpha=32,dropout=0.05,targets=q_proj+v_proj)`);
    const num = (): number => {
      const n = Number(v);
      if (!Number.isFinite(n)) throw new Error(`--lora: ${k}=${v} is not a number`);
      return n;
    };
    if (k === 'r' || k === 'rank') out.rank = num();
    else if (k === 'alpha') out.alpha = num();
    else if (k === 'dropout') out.dropout = num();
    else if (k === 'targets' || k === 'target_modules') out.targetModules = v.split('+').map((t) => t.trim()) as LoraTarget[];
    else throw new Error(`--lora: unknown key "${k}"; known: r, alpha, dropout, targets`);
  }
  return validateLora(out);
}

/** The module names (e.g. model.layers.3.self_attn.q_proj) that get adapters, with their [out, in] sizes. */
export function loraModules(model: HfCausalLM, s: LoraSettings): Array<{ module: string; out: number; in: number }> {
  const list: Array<{ module: string; out: number; in: number }> = [];
  for (let l = 0; l < model.config.numLayers; l++) {
    for (const t of LORA_TARGETS) {
      if (!s.targetModules.includes(t)) continue;
      const module = `model.layers.${l}.${MLP_TARGETS.has(t) ? 'mlp' : 'self_attn'}.${t}`;
      const [out, inp] = model.vars[`${module}.weight`].shape;
      list.push({ module, out, in: inp });
    }
  }
  return list;
}

/** Adapter parameters for a config (no model needed): r · (in + out) per targeted layer. */
export function loraParamCount(cfg: LlmConfig, s: LoraSettings): number {
  const { hiddenSize: d, numHeads: H, numKvHeads: KV, headDim: D, intermediateSize: I } = cfg;
  const size: Record<LoraTarget, [number, number]> = {
    q_proj: [d, H * D],
    k_proj: [d, KV * D],
    v_proj: [d, KV * D],
    o_proj: [H * D, d],
    gate_proj: [d, I],
    up_proj: [d, I],
    down_proj: [I, d],
  };
  return cfg.numLayers * s.targetModules.reduce((n, t) => n + s.rank * (size[t][0] + size[t][1]), 0);
}

const peftName = (module: string, ab: 'A' | 'B'): string => `base_model.model.${module}.lora_${ab}.weight`;

export class LoraAdapters {
  readonly settings: LoraSettings;
  readonly scale: number;
  /** By PEFT tensor name. */
  readonly vars: Record<string, tf.Variable>;
  private readonly modules: Array<{ module: string; out: number; in: number }>;
  private model: HfCausalLM | null = null;
  private dropoutRng: Rng | null = null;

  private constructor(model: HfCausalLM, settings: LoraSettings, tensors: LlmTensors) {
    this.settings = validateLora({ ...settings, targetModules: [...settings.targetModules] });
    this.scale = settings.alpha / settings.rank;
    this.modules = loraModules(model, settings);
    this.vars = {};
    const r = settings.rank;
    for (const m of this.modules) {
      for (const [ab, shape] of [
        ['A', [r, m.in]],
        ['B', [m.out, r]],
      ] as const) {
        const name = peftName(m.module, ab);
        const data = tensors[name];
        if (!data) throw new Error(`LoRA adapter: tensor ${name} is missing (target modules ${settings.targetModules.join(', ')})`);
        if (data.length !== shape[0] * shape[1])
          throw new Error(`LoRA adapter: tensor ${name} has ${data.length} values, expected [${shape.join(', ')}] (rank ${r})`);
        this.vars[name] = tf.variable(tf.tensor2d(data, [...shape]), true, `${model.name}/${name}`);
      }
    }
  }

  /** Fresh adapters: A uniform in ±1/√in from the Rng, B zero (the adapted model equals the base at step 0). */
  static create(model: HfCausalLM, settings: LoraSettings, rng: Rng): LoraAdapters {
    validateLora(settings);
    const t: LlmTensors = {};
    for (const m of loraModules(model, settings)) {
      const bound = 1 / Math.sqrt(m.in);
      const a = new Float32Array(settings.rank * m.in);
      for (let i = 0; i < a.length; i++) a[i] = (2 * rng.float() - 1) * bound;
      t[peftName(m.module, 'A')] = a;
      t[peftName(m.module, 'B')] = new Float32Array(m.out * settings.rank);
    }
    return new LoraAdapters(model, settings, t);
  }

  /** Adapters saved by PEFT (adapter_model.safetensors tensors) or by `toPeft`. */
  static fromTensors(model: HfCausalLM, settings: LoraSettings, tensors: LlmTensors): LoraAdapters {
    return new LoraAdapters(model, settings, tensors);
  }

  /** Route the model's projections through the adapters (one adapter set per model). */
  attach(model: HfCausalLM): void {
    if (model.projectionHook) throw new Error('LoRA: the model already has adapters attached');
    this.model = model;
    const targeted = new Set(this.modules.map((m) => m.module));
    model.projectionHook = (module, x, base) => {
      const y = base(x);
      if (!targeted.has(module)) return y;
      const A = this.vars[peftName(module, 'A')];
      const B = this.vars[peftName(module, 'B')];
      const xin = this.dropoutRng && this.settings.dropout > 0 ? this.dropout(x) : x;
      const delta = tf.matMul(tf.matMul(xin, A, false, true), B, false, true);
      return tf.add(y, tf.mul(delta, this.scale)) as tf.Tensor2D;
    };
  }

  detach(): void {
    if (this.model) this.model.projectionHook = null;
    this.model = null;
  }

  /** Training mode: dropout masks drawn from `rng`. `null` = evaluation (no dropout: sampling, old/ref log-probs). */
  setTraining(rng: Rng | null): void {
    this.dropoutRng = rng;
  }

  private dropout(x: tf.Tensor2D): tf.Tensor2D {
    const p = this.settings.dropout;
    const n = x.size;
    const keep = new Float32Array(n);
    const rng = this.dropoutRng!;
    for (let i = 0; i < n; i++) keep[i] = rng.float() >= p ? 1 / (1 - p) : 0;
    return tf.mul(x, tf.tensor2d(keep, x.shape)) as tf.Tensor2D;
  }

  trainableVariables(): tf.Variable[] {
    return Object.keys(this.vars)
      .sort()
      .map((k) => this.vars[k]);
  }

  paramCount(): number {
    return Object.values(this.vars).reduce((s, v) => s + v.size, 0);
  }

  /** The adapter as PEFT saves it: tensors (float32) and adapter_config.json. */
  toPeft(baseModel = ''): {
    tensors: Array<{ name: string; shape: number[]; data: Float32Array }>;
    adapterConfig: Record<string, unknown>;
  } {
    const tensors = Object.keys(this.vars)
      .sort()
      .map((name) => ({ name, shape: [...this.vars[name].shape], data: new Float32Array(this.vars[name].dataSync()) }));
    return {
      tensors,
      adapterConfig: {
        peft_type: 'LORA',
        task_type: 'CAUSAL_LM',
        base_model_name_or_path: baseModel,
        r: this.settings.rank,
        lora_alpha: this.settings.alpha,
        lora_dropout: this.settings.dropout,
        target_modules: [...this.settings.targetModules],
        bias: 'none',
        fan_in_fan_out: false,
        inference_mode: true,
      },
    };
  }

  /** Base tensors with every adapter folded in: W + (α/r)·B·A (the merged export). */
  mergedTensors(model: HfCausalLM): LlmTensors {
    const out = model.getTensors();
    for (const m of this.modules) {
      const merged = tf.tidy(() => {
        const w = model.vars[`${m.module}.weight`];
        return tf.add(w, tf.mul(tf.matMul(this.vars[peftName(m.module, 'B')], this.vars[peftName(m.module, 'A')]), this.scale));
      });
      out[`${m.module}.weight`] = new Float32Array(merged.dataSync());
      merged.dispose();
    }
    return out;
  }

  dispose(): void {
    this.detach();
    for (const v of Object.values(this.vars)) v.dispose();
  }
}

/** adapter_config.json (PEFT) → LoraSettings, refusing what the lab does not implement. */
export function loraSettingsFromPeft(cfg: unknown): LoraSettings {
  const c = (cfg ?? {}) as Record<string, unknown>;
  if (c.peft_type !== 'LORA') throw new Error(`adapter_config.json: peft_type ${JSON.stringify(c.peft_type)} is not supported; only LORA`);
  if (c.use_dora === true) throw new Error('adapter_config.json: use_dora is not supported (plain LoRA only)');
  if (c.use_rslora === true) throw new Error('adapter_config.json: use_rslora is not supported (scale alpha / r only)');
  if (c.bias !== undefined && c.bias !== 'none')
    throw new Error(`adapter_config.json: bias ${JSON.stringify(c.bias)} is not supported; only "none"`);
  const tm = c.target_modules;
  const targets = (Array.isArray(tm) ? tm : typeof tm === 'string' ? [tm] : []) as LoraTarget[];
  return validateLora({ rank: Number(c.r), alpha: Number(c.lora_alpha), dropout: Number(c.lora_dropout ?? 0), targetModules: targets });
}
