import * as tf from '@tensorflow/tfjs-core';
import type { AggregationFn, DenominatorFn } from './types';

/**
 * `seq-mean-token-sum-norm` (spec §1.1; code only): Σ_r Σ_t m·L / T_pad, where T_pad is the padded response
 * width of the batch (the mask's second dimension). A zero-width batch gives 0. verl's `agg_loss` (core_algos.py at
 * b178a3c, `loss_scale_factor` unset) computes the same: no row is dropped or counted, so a fully masked row or
 * batch adds 0 in both.
 */
export const seqMeanTokenSumNorm: AggregationFn = (lossMat, mask, wholeDenominator) => {
  const width = wholeDenominator ?? mask.shape[1];
  const denominator = tf.scalar(width, 'float32');
  const value = width === 0 ? tf.scalar(0) : (tf.div(tf.sum(tf.mul(lossMat, mask)), denominator) as tf.Scalar);
  return { value, metrics: { denominator } };
};

/** The mini-batch's padded response width. */
export const seqMeanTokenSumNormDenominator: DenominatorFn = (_rowTokens, width) => width;
