import type * as tf from '@tensorflow/tfjs-core';
import type { TensorResult } from '../types';

/** Loss-aggregation names, as verl's `loss_agg_mode` (spec §1.1). */
export type AggregationName = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-sum-norm';

/**
 * One signature for the family: a per-token loss matrix [N,T] and a 0/1 mask [N,T] → a scalar.
 * `metrics.denominator` is what the masked sum was divided by (tokens, rows, valid rows or T).
 */
export type AggregationFn = (lossMat: tf.Tensor2D, mask: tf.Tensor2D) => TensorResult;
