import * as tf from '@tensorflow/tfjs-core';
import type { AggregationFn, DenominatorFn } from './types';

/**
 * `seq-mean-token-mean` (spec §1.1; GRPO_ST, GSPO, SAMPO): the mean over rows that have at least one
 * response token of that row's token mean. Rows with no token are dropped (they neither add 0 nor count in
 * the denominator), as in the paper's code and verl's `agg_loss` (core_algos.py at b178a3c); with no such row
 * the result is 0 where verl's is 0 / 0 = NaN (both with a zero gradient; see token-mean.ts). verl divides a
 * row's sum by its count + 1e-8, which float32 rounds to the count. Written without boolean indexing so the
 * gradient is m / (T_r · #valid rows) on valid rows and 0 elsewhere, as in the reference.
 */
export const seqMeanTokenMean: AggregationFn = (lossMat, mask, wholeDenominator) => {
  const tokens = tf.sum(mask, 1);
  // sign + cast rather than `greater`: both have (zero) gradients, so this stays legal even if a caller's mask
  // is itself computed on the gradient tape (tfjs cannot backpropagate through comparison ops).
  const validB = tf.cast(tf.sign(tokens), 'bool');
  const rowMean = tf.div(tf.sum(tf.mul(lossMat, mask), 1), tf.maximum(tokens, 1));
  const nValid = (wholeDenominator === undefined ? tf.sum(tf.cast(validB, 'float32')) : tf.scalar(wholeDenominator)) as tf.Scalar;
  // `where`, not a product with the 0/1 row mask: a fully masked row is dropped even when it holds NaN/Inf
  // (the reference indexes it away).
  const value = tf.div(tf.sum(tf.where(validB, rowMean, tf.zerosLike(rowMean))), tf.maximum(nValid, 1)) as tf.Scalar;
  return { value, metrics: { denominator: nValid } };
};

/** The mini-batch's rows with at least one response token (the value's max(·, 1) is applied to it there). */
export const seqMeanTokenMeanDenominator: DenominatorFn = (rowTokens) => rowTokens.filter((n) => n > 0).length;
