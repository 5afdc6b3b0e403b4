import * as tf from '@tensorflow/tfjs-core';

/**
 * Token entropy from logits [N,T,V] → [N,T]: H = logsumexp(z) − Σ softmax(z)·z, the reference's
 * `entropy_from_logits`. Differentiable wrt the logits (the entropy bonus −β_H·H pushes on them).
 */
export function entropyFromLogits(logits: tf.Tensor3D): tf.Tensor2D {
  const lse = tf.logSumExp(logits, -1);
  const p = tf.softmax(logits, -1);
  return tf.sub(lse, tf.sum(tf.mul(p, logits), -1)) as tf.Tensor2D;
}
