/**
 * Rotary position embeddings (RoFormer, Su et al. 2021) in the "rotate half" layout of the Hugging Face checkpoints:
 * for head vector x (length D) at position p, x·cos(p·θ) + rotate_half(x)·sin(p·θ), where θ = (θ₀ … θ_{D/2−1})
 * repeated twice and rotate_half(x) = (−x[D/2:], x[:D/2]).
 *
 * Frequency schedules (config `rope_scaling`), θᵢ = base^(−2i/D) before scaling:
 *   default  θᵢ
 *   linear   θᵢ / factor
 *   llama3   wavelength λ = 2π/θᵢ: λ < L/high → θᵢ; λ > L/low → θᵢ/factor; between, a linear blend in L/λ
 *            (L = original_max_position_embeddings)
 *   yarn     per dimension, a ramp between interpolation (θᵢ/factor) and extrapolation (θᵢ) over the dimensions whose
 *            rotation count at L lies between beta_slow and beta_fast; cos and sin are multiplied by attention_factor
 *            (default 0.1·ln(factor) + 1).
 * `dynamic` NTK scaling is not implemented (its frequencies depend on the current sequence length), nor `longrope`.
 *
 * The frequencies are rounded to float32 and the angle p·θ is formed in float32 before cos/sin, as PyTorch does, so
 * that long positions agree with Transformers to float32 rounding.
 */
import * as tf from '@tensorflow/tfjs';
import type { LlmConfig } from './config';

const f32 = Math.fround;

/** Inverse frequencies (length headDim/2, float32-rounded) and the factor cos/sin are multiplied by. */
export function ropeFrequencies(cfg: Pick<LlmConfig, 'headDim' | 'ropeTheta' | 'rope'>): { invFreq: Float32Array; scale: number } {
  const D = cfg.headDim;
  const half = D / 2;
  const base = cfg.ropeTheta;
  const inv = new Float32Array(half);
  for (let i = 0; i < half; i++) inv[i] = f32(1 / f32(base ** f32((2 * i) / D)));
  const r = cfg.rope;
  if (r.type === 'default') return { invFreq: inv, scale: 1 };
  if (r.type === 'linear') return { invFreq: inv.map((v) => f32(v / r.factor)), scale: 1 };
  if (r.type === 'llama3') {
    const lowWave = r.originalMaxPositionEmbeddings / r.lowFreqFactor;
    const highWave = r.originalMaxPositionEmbeddings / r.highFreqFactor;
    const out = new Float32Array(half);
    for (let i = 0; i < half; i++) {
      const wave = (2 * Math.PI) / inv[i];
      if (wave < highWave) out[i] = inv[i];
      else if (wave > lowWave) out[i] = f32(inv[i] / r.factor);
      else {
        const s = (r.originalMaxPositionEmbeddings / wave - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor);
        out[i] = f32((1 - s) * (inv[i] / r.factor) + s * inv[i]);
      }
    }
    return { invFreq: out, scale: 1 };
  }
  // yarn: the dimension index (in [0, D)) at which a frequency makes `rot` full turns over L positions.
  const L = r.originalMaxPositionEmbeddings;
  const dimAt = (rot: number): number => (D * Math.log(L / (rot * 2 * Math.PI))) / (2 * Math.log(base));
  const lo = Math.max(Math.floor(dimAt(r.betaFast)), 0);
  let hi = Math.min(Math.ceil(dimAt(r.betaSlow)), D - 1);
  if (lo === hi) hi += 0.001;
  const out = new Float32Array(half);
  for (let i = 0; i < half; i++) {
    const ramp = Math.min(Math.max((i - lo) / (hi - lo), 0), 1);
    const extra = 1 - ramp; // weight of extrapolation (the unscaled frequency)
    const pos = f32(base ** f32((2 * i) / D));
    out[i] = f32((1 / f32(r.factor * pos)) * (1 - extra) + (1 / pos) * extra);
  }
  return { invFreq: out, scale: r.attentionFactor };
}

/** cos and sin tables [n, headDim] for the given positions (float32, duplicated halves). */
export function ropeTables(
  freq: { invFreq: Float32Array; scale: number },
  positions: ArrayLike<number>,
): { cos: Float32Array; sin: Float32Array } {
  const half = freq.invFreq.length;
  const D = 2 * half;
  const n = positions.length;
  const cos = new Float32Array(n * D);
  const sin = new Float32Array(n * D);
  for (let t = 0; t < n; t++) {
    const p = positions[t];
    for (let i = 0; i < half; i++) {
      const a = f32(p * freq.invFreq[i]);
      const c = f32(Math.cos(a) * freq.scale);
      const s = f32(Math.sin(a) * freq.scale);
      cos[t * D + i] = c;
      cos[t * D + half + i] = c;
      sin[t * D + i] = s;
      sin[t * D + half + i] = s;
    }
  }
  return { cos, sin };
}

/**
 * Apply the rotation to x [N, T, heads, D] with cos/sin [N, T, 1, D] (broadcast over heads). rotate_half is a slice,
 * a negation and a concat: exact, and differentiable on every backend.
 */
export function applyRope(x: tf.Tensor4D, cos: tf.Tensor4D, sin: tf.Tensor4D): tf.Tensor4D {
  return tf.tidy(() => {
    const D = x.shape[3];
    const [x1, x2] = tf.split(x, [D / 2, D / 2], 3);
    const rot = tf.concat([tf.neg(x2), x1], 3);
    return tf.add(tf.mul(x, cos), tf.mul(rot, sin)) as tf.Tensor4D;
  });
}
