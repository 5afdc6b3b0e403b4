import * as tf from '@tensorflow/tfjs-core';
import type { AggregationFn, DenominatorFn } from './types';

/**
 * `seq-mean-token-sum` (spec §1.1; Dr.GRPO in code): mean over ALL rows of the row's token sum; a fully
 * masked row counts as 0 in the mean. An empty batch (no rows) gives 0 instead of the reference's NaN.
 */
export const seqMeanTokenSum: AggregationFn = (lossMat, mask, wholeDenominator) => {
  const rows = wholeDenominator ?? lossMat.shape[0];
  const denominator = tf.scalar(rows, 'float32');
  const value = rows === 0 ? tf.scalar(0) : (tf.div(tf.sum(tf.sum(tf.mul(lossMat, mask), 1)), denominator) as tf.Scalar);
  return { value, metrics: { denominator } };
};

/** Every row of the mini-batch. */
export const seqMeanTokenSumDenominator: DenominatorFn = (rowTokens) => rowTokens.length;
