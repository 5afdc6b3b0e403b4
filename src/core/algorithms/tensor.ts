/**
 * Small tfjs helpers shared by the loss families. All are pure ops on the tape, so gradients flow through
 * them exactly as through the reference's torch ops, except `stopGradient`, which is the `.detach()` of the
 * reference.
 */
import * as tf from '@tensorflow/tfjs-core';

/**
 * Identity in the forward pass, zero gradient in the backward pass (torch `.detach()`). tfjs has no
 * stop-gradient op; a custom gradient keeps it on-device (no data sync) and inside the tape.
 */
const stopGradientImpl = tf.customGrad(((x: tf.Tensor, save: tf.GradSaveFunc) => {
  save([]);
  return { value: tf.clone(x), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) };
}) as unknown as Parameters<typeof tf.customGrad>[0]);

export function stopGradient<T extends tf.Tensor>(x: T): T {
  return (stopGradientImpl as unknown as (x: T) => T)(x);
}

/** verl's masked_mean: Σ(x·m) / (Σm + 1e-8); 0 when nothing is masked in. */
export function maskedMean(x: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return tf.div(tf.sum(tf.mul(x, mask)), tf.add(tf.sum(mask), 1e-8)) as tf.Scalar;
}

/** Per-row token count Σ_t m, shape [N]. */
export function rowTokens(mask: tf.Tensor2D): tf.Tensor1D {
  return tf.sum(mask, 1) as tf.Tensor1D;
}

/** Per-row masked token mean with the row length clamped to ≥ 1 (the reference's `clamp(min=1)`), shape [N]. */
export function rowMaskedMean(x: tf.Tensor2D, mask: tf.Tensor2D): tf.Tensor1D {
  return tf.div(tf.sum(tf.mul(x, mask), 1), tf.maximum(rowTokens(mask), 1)) as tf.Tensor1D;
}

/** Boolean tensor → float32 0/1. */
export function asFloat(b: tf.Tensor): tf.Tensor {
  return tf.cast(b, 'float32');
}

/** Broadcast a per-row value [N] over tokens to [N,T], or pass an [N,T] tensor through. */
export function perToken(x: tf.Tensor1D | tf.Tensor2D, like: tf.Tensor2D): tf.Tensor2D {
  if (x.rank === 2) return x as tf.Tensor2D;
  return tf.mul(tf.expandDims(x, 1), tf.onesLike(like)) as tf.Tensor2D;
}

/** `|x|` with gradient sign(x), i.e. 0 at 0 like torch (tfjs's abs gradient is −1 at 0). */
export function absTorch(x: tf.Tensor): tf.Tensor {
  return tf.mul(x, stopGradient(tf.sign(x)));
}
