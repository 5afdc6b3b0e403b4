import * as tf from '@tensorflow/tfjs-core';
import type { AggregationFn } from './types';

/**
 * `seq-mean-token-mean` (spec §1.1; GRPO_ST, GSPO, SAMPO): the mean over rows that have at least one
 * response token of that row's token mean. Rows with no token are dropped (they neither add 0 nor count in
 * the denominator); with no such row the result is 0. Written without boolean indexing so the gradient is
 * m / (T_r · #valid rows) on valid rows and 0 elsewhere, as in the reference.
 */
export const seqMeanTokenMean: AggregationFn = (lossMat, mask) => {
  const tokens = tf.sum(mask, 1);
  const valid = tf.cast(tf.greater(tokens, 0), 'float32');
  const rowMean = tf.div(tf.sum(tf.mul(lossMat, mask), 1), tf.maximum(tokens, 1));
  const nValid = tf.sum(valid) as tf.Scalar;
  const value = tf.div(tf.sum(tf.mul(rowMean, valid)), tf.maximum(nValid, 1)) as tf.Scalar;
  return { value, metrics: { denominator: nValid } };
};
