import * as tf from '@tensorflow/tfjs-core';
import type { AggregationFn, DenominatorFn } from './types';

/**
 * `token-mean` (spec §1.1, the default): Σ_{r,t} m·L / (Σ_{r,t} m + 1e-8). Every token weighs the same, so
 * long responses weigh more. A fully masked batch gives 0 (the 1e-8 keeps the division finite).
 */
export const tokenMean: AggregationFn = (lossMat, mask, wholeDenominator) => {
  const denominator = (wholeDenominator === undefined ? tf.add(tf.sum(mask), 1e-8) : tf.scalar(wholeDenominator)) as tf.Scalar;
  const value = tf.div(tf.sum(tf.mul(lossMat, mask)), denominator) as tf.Scalar;
  return { value, metrics: { denominator } };
};

/** All response tokens of the mini-batch (+ the same 1e-8). */
export const tokenMeanDenominator: DenominatorFn = (rowTokens) => rowTokens.reduce((s, n) => s + n, 0) + 1e-8;
