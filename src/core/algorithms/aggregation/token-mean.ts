import * as tf from '@tensorflow/tfjs-core';
import type { AggregationFn, DenominatorFn } from './types';

/**
 * `token-mean` (spec §1.1, the default): Σ_{r,t} m·L / (Σ_{r,t} m + 1e-8). Every token weighs the same, so
 * long responses weigh more. verl's `agg_loss` (core_algos.py at b178a3c) divides by Σ m alone; in float32,
 * Σ m + 1e-8 rounds to Σ m whenever there is a token, so the values agree, and a fully masked batch gives 0 here
 * where verl's is 0 / 0 = NaN (both with a zero gradient): a NaN loss would trip the detector for a batch that
 * updates nothing. A masked-out token's NaN/Inf is dropped (`where`, as verl's masked_sum).
 */
export const tokenMean: AggregationFn = (lossMat, mask, wholeDenominator) => {
  const denominator = (wholeDenominator === undefined ? tf.add(tf.sum(mask), 1e-8) : tf.scalar(wholeDenominator)) as tf.Scalar;
  // sign + cast rather than `greater`: legal when the mask is itself on the tape (see seq-mean-token-mean).
  const kept = tf.where(tf.cast(tf.sign(mask), 'bool'), lossMat, tf.zerosLike(lossMat));
  const value = tf.div(tf.sum(tf.mul(kept, mask)), denominator) as tf.Scalar;
  return { value, metrics: { denominator } };
};

/** All response tokens of the mini-batch (+ the same 1e-8). */
export const tokenMeanDenominator: DenominatorFn = (rowTokens) => rowTokens.reduce((s, n) => s + n, 0) + 1e-8;
