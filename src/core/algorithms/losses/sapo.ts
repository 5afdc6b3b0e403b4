import * as tf from '@tensorflow/tfjs-core';
import { AGGREGATIONS } from '../aggregation/index';
import { asFloat, maskedMean, rowMaskedMean } from '../tensor';
import { effectiveMask } from './seq-mask';
import type { PolicyLossFn } from './types';
import { withRolloutIs } from './types';

/**
 * `sapo` — soft adaptive gate instead of a hard clip (spec §1.2c, Qwen SAPO):
 *   τ_r = τ_pos if Ā_r > 0 else τ_neg   (Ā_r = token mean of A over the row, as the reference does;
 *                                        per token by sign(A_{r,t}) when sapoPerTokenTau)
 *   gate = (4/τ)·σ(τ(w − 1)),  L = −gate·A,   δ clamped to ±20.
 * The gate's slope at w = 1 is 1, so on-policy it equals the vanilla gradient; far off-policy it decays
 * smoothly instead of cutting to zero. No hard clipping: the ±ε band is for diagnostics only. As ARLArena's
 * compute_policy_loss_sapo reports it (verl/trainer/ppo/core_algos.py): pg_clipfrac = token mean over the
 * EFFECTIVE mask (after sequence masking) of (w > 1+ε_hi and A_t > 0) or (w < 1−ε_lo and A_t < 0), each
 * token judged by its own advantage sign — the tokens a PPO clip would have cut; pg_clipfrac_lower = 0
 * (SAPO has no dual clip).
 */
export const sapo: PolicyLossFn = (input, p) => {
  const { mask, numMasked } = effectiveMask(input, p.seqMask);
  const A = input.advantages;
  const logRatio = tf.clipByValue(tf.sub(input.logProb, input.oldLogProb), -20, 20);
  const ratio = tf.exp(logRatio);
  // Ā over the response mask with the length clamped at 1. The reference takes it over the effective mask;
  // the two differ only on sequence-masked rows, which carry no loss, so the value and gradient agree.
  const positive = p.sapoPerTokenTau ? tf.greater(A, 0) : tf.expandDims(tf.greater(rowMaskedMean(A, input.mask), 0), 1);
  // τ per token [N,T] or per row [N,1]; the [N,1] form broadcasts over the row's tokens below.
  const tau = tf.where(positive, tf.fill(positive.shape, p.tauPos), tf.fill(positive.shape, p.tauNeg));
  const gate = tf.div(tf.mul(4, tf.sigmoid(tf.mul(tau, tf.sub(ratio, 1)))), tau);
  const losses = tf.mul(tf.neg(gate), A) as tf.Tensor2D;
  const agg = AGGREGATIONS.get(p.aggregation).fn(withRolloutIs(losses, input), mask, p.pgDenominator);
  return {
    value: agg.value,
    metrics: {
      'actor/pg_clipfrac': maskedMean(
        asFloat(
          tf.logicalOr(
            tf.logicalAnd(tf.greater(ratio, 1 + p.clipRatioHigh), tf.greater(A, 0)),
            tf.logicalAnd(tf.less(ratio, 1 - p.clipRatioLow), tf.less(A, 0)),
          ),
        ),
        mask,
      ),
      'actor/pg_clipfrac_lower': tf.scalar(0),
      'actor/ppo_kl': maskedMean(tf.neg(logRatio), mask),
      'actor/num_masked_seqs': numMasked,
    },
  };
};
