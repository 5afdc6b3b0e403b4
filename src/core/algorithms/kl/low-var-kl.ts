import * as tf from '@tensorflow/tfjs-core';
import type { KlFn } from './types';

/**
 * `low_var_kl` (k3, the paper's KL loss, spec §2.1): Δ = clamp(log π_ref − log π_θ, −20, 20);
 * k3 = e^Δ − Δ − 1, clamped to [−10, 10] (the reference's clamps). Non-negative and low-variance.
 */
export const k3: KlFn = (logProb, refLogProb) => {
  const delta = tf.clipByValue(tf.sub(refLogProb, logProb), -20, 20);
  const kld = tf.sub(tf.sub(tf.exp(delta), delta), 1);
  return { value: tf.clipByValue(kld, -10, 10) as tf.Tensor2D, metrics: {} };
};
