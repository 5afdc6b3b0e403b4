import * as tf from '@tensorflow/tfjs-core';
import { AGGREGATIONS } from '../aggregation/index';
import { asFloat, maskedMean, stopGradient } from '../tensor';
import { effectiveMask } from './seq-mask';
import type { PolicyLossFn } from './types';
import { withRolloutIs } from './types';

/**
 * `cispo` — clipped IS weight with stop-gradient (spec §1.2b, MiniMax-M1):
 *   L = −sg(clip(w, 1−ε_lo, 1+ε_hi)) · A · log π_θ
 * The value multiplies log π_θ itself (not the ratio), so the gradient wrt log π_θ is −sg(ŵ)·A on every
 * token: nothing is ever cut off ("tolerant"). ε_lo = 1.0 means no lower bound (the release scripts).
 * pg_clipfrac = share of tokens with w ≠ clip(w); pg_clipfrac_lower is 0 (no dual clip).
 */
export const cispo: PolicyLossFn = (input, p) => {
  const { mask, numMasked } = effectiveMask(input, p.seqMask);
  const logRatio = tf.clipByValue(tf.sub(input.logProb, input.oldLogProb), -20, 20);
  const ratio = tf.exp(logRatio);
  const lo = 1 - p.clipRatioLow;
  const hi = 1 + p.clipRatioHigh;
  const weight = stopGradient(tf.clipByValue(ratio, lo, hi));
  const losses = tf.mul(tf.mul(tf.neg(weight), input.advantages), input.logProb) as tf.Tensor2D;
  const agg = AGGREGATIONS.get(p.aggregation).fn(withRolloutIs(losses, input), mask, p.pgDenominator);
  const isClipped = tf.logicalOr(tf.less(ratio, lo), tf.greater(ratio, hi));
  return {
    value: agg.value,
    metrics: {
      'actor/pg_clipfrac': maskedMean(asFloat(isClipped), mask),
      'actor/pg_clipfrac_lower': tf.scalar(0),
      'actor/ppo_kl': maskedMean(tf.neg(logRatio), mask),
      'actor/num_masked_seqs': numMasked,
    },
  };
};
