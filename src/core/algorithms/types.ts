/**
 * Shared types of the algorithm families. See index.ts for the row-batch layout every family works on.
 */
import type * as tf from '@tensorflow/tfjs-core';

/** A tensor family's result: the differentiable value plus diagnostics as scalar tensors (caller disposes). */
export interface TensorResult<V extends tf.Tensor = tf.Scalar> {
  readonly value: V;
  readonly metrics: Readonly<Record<string, tf.Scalar>>;
}

/** A plain-number family's result (advantages, filtering): values plus diagnostics as numbers. */
export interface NumberResult<V> {
  readonly value: V;
  readonly metrics: Readonly<Record<string, number>>;
}
