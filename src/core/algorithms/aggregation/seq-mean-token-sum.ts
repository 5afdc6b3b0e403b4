import * as tf from '@tensorflow/tfjs-core';
import type { AggregationFn, DenominatorFn } from './types';

/**
 * `seq-mean-token-sum` (spec §1.1; Dr.GRPO in code): the mean, over the rows with at least one token in the mask,
 * of the row's token sum — verl's `agg_loss` since #3915 (Oct 2025; core_algos.py at b178a3c:
 * masked_sum(seq_losses, seq_mask) / seq_mask.sum(), seq_mask = a row has a token). A row without one (padding, a
 * row a sequence-level rejection option or sequence masking removed) is dropped from the sum and the count, so
 * with one of three rows rejected the value is the two kept rows' mean, 1.5× what dividing by every row gives.
 * The paper's code (WillDreamer/ARLArena's core_algos.py, as verl before #3915) divides by every row instead
 * (torch.mean over rows); docs/guides/rollout-correction.md says where that changes numbers.
 * With no such row the result is 0 and its gradient 0 where verl's is 0 / 0 = NaN (its gradient 0 too):
 * a NaN loss would trip the detector for a batch that updates nothing.
 */
export const seqMeanTokenSum: AggregationFn = (lossMat, mask, wholeDenominator) => {
  const tokens = tf.sum(mask, 1);
  // sign + cast rather than `greater` (as seq-mean-token-mean): legal when the mask is itself on the tape.
  const validB = tf.cast(tf.sign(tokens), 'bool');
  const rowSum = tf.sum(tf.mul(lossMat, mask), 1);
  const nValid = (wholeDenominator === undefined ? tf.sum(tf.cast(validB, 'float32')) : tf.scalar(wholeDenominator)) as tf.Scalar;
  // `where`, as verl's masked_sum: a dropped row's NaN/Inf does not reach the sum or the gradient.
  const value = tf.div(tf.sum(tf.where(validB, rowSum, tf.zerosLike(rowSum))), tf.maximum(nValid, 1)) as tf.Scalar;
  return { value, metrics: { denominator: nValid } };
};

/** The mini-batch's rows with at least one token in the mask (the value's max(·, 1) is applied to it there). */
export const seqMeanTokenSumDenominator: DenominatorFn = (rowTokens) => rowTokens.filter((n) => n > 0).length;
