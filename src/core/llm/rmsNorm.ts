/**
 * RMSNorm (Zhang & Sennrich 2019), as the Qwen and Llama checkpoints use it: y = w · x / √(mean(x²) + ε) over the
 * last axis, with no mean subtraction and no bias. Computed in float32 (the lab's compute precision), which is also
 * what Transformers does (it upcasts to float32 inside the norm).
 */
import * as tf from '@tensorflow/tfjs';

export function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor, eps: number): T {
  return tf.tidy(() => {
    const ms = tf.mean(tf.mul(x, x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, eps))), weight) as T;
  });
}
