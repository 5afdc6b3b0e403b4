import * as tf from '@tensorflow/tfjs-core';
import { AGGREGATIONS } from '../aggregation/index';
import { asFloat, maskedMean } from '../tensor';
import { effectiveMask } from './seq-mask';
import type { PolicyLossFn } from './types';
import { withRolloutIs } from './types';

/**
 * `vanilla` — GRPO/PPO token clip with asymmetric ε and dual clip (spec §1.2a):
 *   δ = clamp(log π_θ − log π_old, −20, 20), w = e^δ
 *   L = max(−A·w, −A·clip(w, 1−ε_lo, 1+ε_hi));  if A < 0: L = min(L, −A·c)
 * Metrics: pg_clipfrac = share of tokens where the clipped branch is strictly larger; pg_clipfrac_lower =
 * share of A<0 tokens where the dual-clip cap binds; ppo_kl = masked mean of −δ (clamped δ, as the reference).
 */
export const vanilla: PolicyLossFn = (input, p) => {
  const { mask, numMasked } = effectiveMask(input, p.seqMask);
  const A = input.advantages;
  const logRatio = tf.clipByValue(tf.sub(input.logProb, input.oldLogProb), -20, 20);
  const ratio = tf.exp(logRatio);
  const l1 = tf.mul(tf.neg(A), ratio);
  const l2 = tf.mul(tf.neg(A), tf.clipByValue(ratio, 1 - p.clipRatioLow, 1 + p.clipRatioHigh));
  const clipped = tf.maximum(l1, l2);
  const l3 = tf.mul(tf.neg(A), p.clipRatioC);
  const dual = tf.minimum(l3, clipped);
  const negative = tf.less(A, 0);
  const losses = tf.where(negative, dual, clipped) as tf.Tensor2D;
  const agg = AGGREGATIONS.get(p.aggregation).fn(withRolloutIs(losses, input), mask, p.pgDenominator);
  return {
    value: agg.value,
    metrics: {
      'actor/pg_clipfrac': maskedMean(asFloat(tf.greater(l2, l1)), mask),
      'actor/pg_clipfrac_lower': maskedMean(tf.mul(asFloat(tf.greater(clipped, l3)), asFloat(negative)), mask),
      'actor/ppo_kl': maskedMean(tf.neg(logRatio), mask),
      'actor/num_masked_seqs': numMasked,
    },
  };
};
