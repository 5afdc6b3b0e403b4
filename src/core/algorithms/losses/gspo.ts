import * as tf from '@tensorflow/tfjs-core';
import { seqMeanTokenMean } from '../aggregation/seq-mean-token-mean';
import { asFloat, maskedMean, rowMaskedMean, stopGradient } from '../tensor';
import type { PolicyLossFn } from './types';
import { withRolloutIs } from './types';

/**
 * `gspo` — sequence-level clip on the length-normalised ratio (spec §1.2d, used by SAMPO). One "sequence"
 * is one turn's response.
 *   ℓ_r = (1/|y_r|) Σ_t δ_{r,t}   (unclamped δ, |y_r| clamped ≥ 1)
 *   log s̃_{r,t} = min(sg(ℓ_r) + log π_θ − sg(log π_θ), 10)   → value s_r, gradient s_r·∇log π_θ
 *   L = max(−A·s̃, −A·clip(s̃, 1−ε_lo, 1+ε_hi))
 * Always aggregated with seq-mean-token-mean, whatever `aggregation` says; no dual clip; no sequence
 * masking. ppo_kl is the masked mean of the UNclamped −δ; pg_clipfrac_lower is 0.
 */
export const gspo: PolicyLossFn = (input, p) => {
  const { mask } = input;
  const A = input.advantages;
  const logRatio = tf.sub(input.logProb, input.oldLogProb) as tf.Tensor2D;
  const seqLogRatio = rowMaskedMean(logRatio, mask);
  const tokenLog = tf.add(tf.sub(input.logProb, stopGradient(input.logProb)), tf.expandDims(stopGradient(seqLogRatio), 1));
  const seqRatio = tf.exp(tf.minimum(tokenLog, 10));
  const l1 = tf.mul(tf.neg(A), seqRatio);
  const l2 = tf.mul(tf.neg(A), tf.clipByValue(seqRatio, 1 - p.clipRatioLow, 1 + p.clipRatioHigh));
  const losses = tf.maximum(l1, l2) as tf.Tensor2D;
  return {
    value: seqMeanTokenMean(withRolloutIs(losses, input), mask, p.pgDenominator).value,
    metrics: {
      'actor/pg_clipfrac': maskedMean(asFloat(tf.greater(l2, l1)), mask),
      'actor/pg_clipfrac_lower': tf.scalar(0),
      'actor/ppo_kl': maskedMean(tf.neg(logRatio), mask),
      'actor/num_masked_seqs': tf.scalar(0),
    },
  };
};
