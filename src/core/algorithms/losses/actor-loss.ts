import * as tf from '@tensorflow/tfjs-core';
import { AGGREGATIONS } from '../aggregation/index';
import { BYPASS_LOSSES, type BypassParams } from '../correction/index';
import { KL_ESTIMATORS } from '../kl/index';
import type { KlName } from '../kl/types';
import type { TensorResult } from '../types';
import { POLICY_LOSSES } from './index';
import type { PolicyLossInput, PolicyLossName, PolicyLossParams } from './types';

/**
 * The actor's mini-batch row batch: the policy-loss inputs plus what the auxiliary terms need.
 * - `entropy`    [N,T] token entropy of the CURRENT policy (entropyFromLogits), differentiable; omit when
 *                entropyCoeff is 0.
 * - `refLogProb` [N,T] log π_ref (constant); required when the KL loss is enabled.
 */
export interface ActorBatch extends PolicyLossInput {
  readonly entropy?: tf.Tensor2D;
  readonly refLogProb?: tf.Tensor2D;
}

export interface ActorLossParams extends PolicyLossParams {
  readonly mode: PolicyLossName;
  /** β_H: the entropy bonus weight. */
  readonly entropyCoeff: number;
  /** KL loss to π_ref (`use_kl_loss`); `inReward` KL is applied to scores instead (see inRewardKl). */
  readonly kl: { readonly enabled: boolean; readonly type: KlName; readonly coef: number };
  /** The whole mini-batch's denominator of `aggregation` (entropy and KL terms) when this batch is one chunk of it. */
  readonly auxDenominator?: number;
  /**
   * Rollout-correction bypass mode (verl bypass_mode): `oldLogProb` holds the rollout engine's log-probs and the
   * policy loss is BYPASS_LOSSES[lossType] instead of `mode`. Absent = the configured policy loss.
   */
  readonly bypass?: Pick<BypassParams, 'lossType' | 'correction'>;
}

/**
 * The full objective of one mini-batch (spec §2.1):
 *   loss = pg_loss − β_H·Agg[H] + β_KL·Agg[KL(π_θ‖π_ref)]
 * Entropy and KL are aggregated with the configured aggregation over the response mask (GSPO's forced
 * seq-mean-token-mean applies to pg_loss only, as in the reference). Metrics: actor/pg_loss,
 * actor/pg_clipfrac, actor/pg_clipfrac_lower, actor/ppo_kl, actor/num_masked_seqs, actor/entropy,
 * actor/kl_loss, actor/kl_coef — scalar tensors marked `tf.keep`, so they survive a surrounding
 * `tf.variableGrads`/`tf.tidy`; the caller reads and disposes them.
 */
export function actorLoss(batch: ActorBatch, params: ActorLossParams): TensorResult {
  const agg = AGGREGATIONS.get(params.aggregation).fn;
  const pg = params.bypass
    ? BYPASS_LOSSES.get(params.bypass.lossType).fn(batch, { ...params, ...params.bypass })
    : POLICY_LOSSES.get(params.mode).fn(batch, params);
  let value: tf.Scalar = pg.value;
  const metrics: Record<string, tf.Scalar> = { ...pg.metrics, 'actor/pg_loss': pg.value };
  if (batch.entropy) {
    const ent = agg(batch.entropy, batch.mask, params.auxDenominator).value;
    metrics['actor/entropy'] = ent;
    if (params.entropyCoeff !== 0) value = tf.sub(value, tf.mul(params.entropyCoeff, ent));
  } else if (params.entropyCoeff !== 0) {
    throw new Error(
      `actorLoss: entropyCoeff is ${params.entropyCoeff} but the batch has no entropy tensor; pass entropyFromLogits(logits) or set algorithm.entropyCoeff=0`,
    );
  }
  if (params.kl.enabled) {
    if (!batch.refLogProb)
      throw new Error(
        'actorLoss: the KL loss is enabled but the batch has no refLogProb; compute reference log-probs or set algorithm.kl.enabled=false',
      );
    const kld = KL_ESTIMATORS.get(params.kl.type).fn(batch.logProb, batch.refLogProb).value;
    const klLoss = agg(kld, batch.mask, params.auxDenominator).value;
    metrics['actor/kl_loss'] = klLoss;
    metrics['actor/kl_coef'] = tf.scalar(params.kl.coef);
    value = tf.add(value, tf.mul(params.kl.coef, klLoss));
  }
  for (const m of Object.values(metrics)) tf.keep(m);
  return { value, metrics };
}

/**
 * In-reward KL (`use_kl_in_reward`, off in the paper): row score S_r − β·Σ_t m·KL(old‖ref), with the KL
 * estimator evaluated on the OLD log-probs (no gradient). Returns the penalised scores.
 */
export function inRewardKl(
  scores: readonly number[],
  oldLogProb: tf.Tensor2D,
  refLogProb: tf.Tensor2D,
  mask: tf.Tensor2D,
  type: KlName,
  coef: number,
): number[] {
  const rowKl = tf.tidy(() => tf.sum(tf.mul(KL_ESTIMATORS.get(type).fn(oldLogProb, refLogProb).value, mask), 1));
  const kl = rowKl.dataSync();
  rowKl.dispose();
  if (kl.length !== scores.length) throw new Error(`inRewardKl: ${scores.length} scores but ${kl.length} rows of log-probs`);
  return scores.map((s, i) => s - coef * kl[i]);
}
