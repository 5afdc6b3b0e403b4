/**
 * Bypass mode (verl core_algos.py `compute_policy_loss_bypass_mode`, rollout_corr_helper.py `apply_bypass_mode`):
 * the trainer skips recomputing π_old and uses the rollout engine's log-probs in its place (two policies instead
 * of three). Inside the loss, IS weights and the rejection mask are computed from the CURRENT log-probs
 * (detached) against the rollout's, then:
 *   - `ppo_clip`:  verl's vanilla PPO-clip loss (dual clip c) with old := rollout on the rejection-masked tokens;
 *                  the ratio π_θ/π_rollout already is the IS correction, so no IS weight is applied (IS metrics
 *                  are still logged);
 *   - `reinforce`: L = −A · log π_θ · sg(w) on the masked tokens (w = 1 when IS is off); actor/ppo_kl is the
 *                  masked mean of log π_rollout − log π_θ, unclamped.
 * Both aggregate with the configured loss_agg_mode over the rejection-masked tokens.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AGGREGATIONS } from '../aggregation/index';
import type { PolicyLossInput, PolicyLossParams } from '../losses/types';
import { vanilla } from '../losses/vanilla';
import { maskedMean } from '../tensor';
import type { TensorResult } from '../types';
import { rolloutCorrection, type RolloutCorrectionParams } from './pipeline';
import type { BypassLossType } from './types';

export interface BypassParams extends PolicyLossParams {
  readonly lossType: BypassLossType;
  readonly correction: RolloutCorrectionParams;
}

export type BypassLossFn = (input: PolicyLossInput, p: BypassParams) => TensorResult;

function constant(m: number[][], like: tf.Tensor2D): tf.Tensor2D {
  return tf.tensor2d(m.length === 0 ? [] : m.flat(), like.shape, 'float32');
}

/**
 * The correction part shared by both loss types: the current log-probs' VALUES (a read, off the tape: verl's
 * torch.no_grad; `bypassLogProb` when the trainer read them already) against the rollout's. Returns constant tensors and the metrics as scalars; with no response
 * token in the batch there is nothing to correct (verl would raise) and the input mask is used as is.
 */
function correct(
  input: PolicyLossInput,
  p: BypassParams,
): { mask: tf.Tensor2D; weights: tf.Tensor2D | null; metrics: Record<string, tf.Scalar> } {
  const mask = input.mask.arraySync();
  if (!mask.some((row) => row.some((v) => v !== 0))) return { mask: input.mask, weights: null, metrics: {} };
  const r = rolloutCorrection((input.bypassLogProb ?? input.logProb).arraySync(), input.oldLogProb.arraySync(), mask, p.correction);
  const metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, tf.scalar(v)]));
  return { mask: constant(r.mask, input.mask), weights: r.weights ? constant(r.weights, input.mask) : null, metrics };
}

export const bypassPpoClip: BypassLossFn = (input, p) => {
  const c = correct(input, p);
  // No IS weight on the PPO-clip loss: the ratio to π_rollout already is the correction (verl passes None).
  const { logProb, oldLogProb, advantages } = input;
  const r = vanilla({ logProb, oldLogProb, advantages, mask: c.mask }, { ...p, seqMask: { enabled: false, delta: 0 } });
  const { 'actor/num_masked_seqs': _unused, ...actor } = r.metrics;
  _unused.dispose();
  return { value: r.value, metrics: { ...actor, ...c.metrics } };
};

export const bypassReinforce: BypassLossFn = (input, p) => {
  const c = correct(input, p);
  const base = tf.mul(tf.neg(input.advantages), input.logProb);
  const losses = (c.weights ? tf.mul(base, c.weights) : base) as tf.Tensor2D;
  const value = AGGREGATIONS.get(p.aggregation).fn(losses, c.mask, p.pgDenominator).value;
  return { value, metrics: { 'actor/ppo_kl': maskedMean(tf.sub(input.oldLogProb, input.logProb), c.mask), ...c.metrics } };
};
