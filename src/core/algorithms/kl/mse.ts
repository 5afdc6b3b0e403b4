import * as tf from '@tensorflow/tfjs-core';
import type { KlFn } from './types';

/** `mse` (k2): ½(log π_θ − log π_ref)². Its gradient is the right KL gradient estimator. */
export const k2: KlFn = (logProb, refLogProb) => {
  const d = tf.sub(logProb, refLogProb);
  return { value: tf.mul(0.5, tf.mul(d, d)) as tf.Tensor2D, metrics: {} };
};
