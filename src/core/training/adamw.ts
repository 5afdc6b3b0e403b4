/**
 * AdamW with decoupled weight decay (Loshchilov & Hutter 2019), global grad-norm clipping and the skip rule for
 * non-finite gradients (spec §6.1 item 6). tfjs ships Adam but not AdamW, and its Adam's state is not easily
 * checkpointed, so this is ours: moments live in plain Float32Arrays-backed tf.Variables keyed by the policy's
 * variable names and serialise exactly (resume-equivalence needs bit-identical moments).
 *
 * Update order follows torch.optim.AdamW (what verl uses):
 *   θ ← θ·(1 − lr·wd);  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
 *   θ ← θ − lr · (m / (1−β1^t)) / (sqrt(v / (1−β2^t)) + eps)
 * Clipping follows torch.nn.utils.clip_grad_norm_: coef = maxNorm / (‖g‖ + 1e-6), applied only when < 1.
 */
import * as tf from '@tensorflow/tfjs';
import type { NamedTensors } from './tensorio';
import { NonFiniteWeightsError } from './finiteWeights';

export interface AdamWOptions {
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly weightDecay: number;
  /** Global L2 clip; ≤ 0 or non-finite disables clipping. */
  readonly gradClip: number;
}

export interface StepReport {
  /** Global L2 norm of the gradient before clipping (may be NaN/Infinity: then `skipped`). */
  readonly gradNorm: number;
  readonly skipped: boolean;
  /**
   * The gradient was finite but the update's result was not (NaN/Infinity in a new weight or moment: an eps that
   * is 0 in float32, an overflowing step): the update was skipped all the same.
   */
  readonly nonFiniteResult?: boolean;
}

export class AdamW {
  private readonly m = new Map<string, tf.Variable>();
  private readonly v = new Map<string, tf.Variable>();
  /** Number of applied (not skipped) updates: the bias-correction exponent. */
  private t = 0;

  constructor(
    private readonly params: readonly tf.Variable[],
    private readonly opts: AdamWOptions,
  ) {
    const seen = new Set<string>();
    for (const p of params) {
      if (seen.has(p.name)) throw new Error(`AdamW: duplicate variable name "${p.name}"`);
      seen.add(p.name);
      this.m.set(p.name, tf.variable(tf.zerosLike(p), false, `adamw_m/${p.name}`));
      this.v.set(p.name, tf.variable(tf.zerosLike(p), false, `adamw_v/${p.name}`));
    }
  }

  get stepCount(): number {
    return this.t;
  }

  /**
   * Apply one update from `grads` (variable name → gradient). Returns the pre-clip global norm; a non-finite
   * norm skips the update entirely (parameters, moments and t untouched), as the reference trainer does. So does
   * a finite gradient whose update comes out non-finite anywhere: every new weight and moment is computed first
   * and checked, and only an all-finite update is assigned.
   */
  step(grads: tf.NamedTensorMap, lr: number): StepReport {
    const present = this.params.filter((p) => grads[p.name] !== undefined);
    const sq = tf.tidy(() => {
      const parts = present.map((p) => tf.sum(tf.square(grads[p.name])));
      return parts.length === 0 ? tf.scalar(0) : tf.addN(parts);
    });
    const gradNorm = Math.sqrt(sq.dataSync()[0]);
    sq.dispose();
    if (!Number.isFinite(gradNorm)) return { gradNorm, skipped: true };
    const clip = this.opts.gradClip;
    const coef = clip > 0 && Number.isFinite(clip) ? Math.min(1, clip / (gradNorm + 1e-6)) : 1;
    const t = this.t + 1;
    const { beta1, beta2, eps, weightDecay } = this.opts;
    const bc1 = 1 - Math.pow(beta1, t);
    const bc2 = 1 - Math.pow(beta2, t);
    const next: Array<{ p: tf.Variable; m: tf.Variable; v: tf.Variable; pNew: tf.Tensor; mNew: tf.Tensor; vNew: tf.Tensor }> = [];
    try {
      for (const p of present) {
        const m = this.m.get(p.name);
        const v = this.v.get(p.name);
        if (!m || !v) throw new Error(`AdamW: unknown variable "${p.name}"`);
        const [pNew, mNew, vNew] = tf.tidy(() => {
          const g = coef < 1 ? tf.mul(grads[p.name], coef) : grads[p.name];
          const mN = tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1));
          const vN = tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2));
          const decayed = weightDecay > 0 ? tf.mul(p, 1 - lr * weightDecay) : p;
          const denom = tf.add(tf.sqrt(tf.div(vN, bc2)), eps);
          const upd = tf.div(tf.div(mN, bc1), denom);
          return [tf.sub(decayed, tf.mul(upd, lr)), mN, vN];
        });
        next.push({ p, m, v, pNew, mNew, vNew });
      }
      // One scalar read for the whole update: are all new weights and moments finite?
      const allFinite = tf.tidy(() => {
        const parts = next.flatMap((n) => [n.pNew, n.mNew, n.vNew]).map((x) => tf.all(tf.isFinite(x)));
        return parts.length === 0 ? tf.scalar(true) : tf.all(tf.stack(parts));
      });
      const ok = allFinite.dataSync()[0] === 1;
      allFinite.dispose();
      if (!ok) return { gradNorm, skipped: true, nonFiniteResult: true };
      for (const n of next) {
        n.m.assign(n.mNew);
        n.v.assign(n.vNew);
        n.p.assign(n.pNew);
      }
      this.t = t;
      return { gradNorm, skipped: false };
    } finally {
      for (const n of next) tf.dispose([n.pNew, n.mNew, n.vNew]);
    }
  }

  /** Moments and step count for a checkpoint. */
  getState(): { t: number; tensors: NamedTensors } {
    const tensors: NamedTensors = {};
    for (const p of this.params) {
      const m = this.m.get(p.name);
      const v = this.v.get(p.name);
      if (!m || !v) continue;
      tensors[`m/${p.name}`] = { shape: [...m.shape], data: m.dataSync() as Float32Array };
      tensors[`v/${p.name}`] = { shape: [...v.shape], data: v.dataSync() as Float32Array };
    }
    return { t: this.t, tensors };
  }

  setState(state: { t: number; tensors: NamedTensors }): void {
    for (const p of this.params) {
      for (const [kind, store] of [
        ['m', this.m],
        ['v', this.v],
      ] as const) {
        const saved = state.tensors[`${kind}/${p.name}`];
        if (!saved) throw new Error(`AdamW.setState: checkpoint lacks ${kind}/${p.name}`);
        const dst = store.get(p.name);
        if (!dst) throw new Error(`AdamW.setState: unknown variable "${p.name}"`);
        if (saved.data.length !== dst.size)
          throw new Error(`AdamW.setState: ${kind}/${p.name} has ${saved.data.length} values, expected ${dst.size}`);
        dst.assign(tf.tensor(saved.data, dst.shape, 'float32'));
      }
    }
    this.t = state.t;
  }

  dispose(): void {
    for (const x of this.m.values()) x.dispose();
    for (const x of this.v.values()) x.dispose();
    this.m.clear();
    this.v.clear();
  }
}

/** Throws NonFiniteWeightsError naming the first variable holding a non-finite value; one reduction per variable. */
export function assertFiniteWeights(vars: readonly tf.Variable[], step: number): void {
  for (const v of vars) {
    const bad = tf.tidy(() => tf.sum(tf.cast(tf.logicalNot(tf.isFinite(v)), 'int32')));
    const n = bad.dataSync()[0];
    bad.dispose();
    if (n > 0) throw new NonFiniteWeightsError(step, v.name, n, v.size);
  }
}
