import * as tf from '@tensorflow/tfjs-core';
import type { AggregationName } from '../aggregation/types';
import type { TensorResult } from '../types';

/** Policy-loss (importance-sampling clipping) names, as verl's `policy_loss.loss_mode` (spec §1.2). */
export type PolicyLossName = 'vanilla' | 'cispo' | 'sapo' | 'gspo';

/**
 * The row batch a policy loss sees: one row per turn response, T = padded response width.
 * - `logProb`    [N,T] log π_θ of the sampled tokens: the only differentiable input.
 * - `oldLogProb` [N,T] log π_old (recomputed by the trainer); treated as a constant.
 * - `advantages` [N,T] the row advantage broadcast over the row's tokens (use `perToken` for an [N] vector).
 * - `mask`       [N,T] 1 on response tokens, 0 on padding.
 */
export interface PolicyLossInput {
  readonly logProb: tf.Tensor2D;
  readonly oldLogProb: tf.Tensor2D;
  readonly advantages: tf.Tensor2D;
  readonly mask: tf.Tensor2D;
  /**
   * Rollout-correction IS weights [N,T] (constant; verl `rollout_is_weights`, decoupled mode): each token's
   * policy loss is multiplied by its weight before aggregation. Absent = no correction.
   */
  readonly rolloutIsWeights?: tf.Tensor2D;
  /**
   * Bypass mode: the current log-probs' values [N,T] (constant) the correction — IS weights, rejection — is computed
   * from, when the trainer read them before the loss: a mini-batch in chunks or on K workers, whose whole-batch
   * denominator counts the tokens that rejection keeps. Absent = `logProb`'s own values.
   */
  readonly bypassLogProb?: tf.Tensor2D;
  /**
   * Sequence masking: the rows to keep [N] (constant, 1 keep / 0 masked) when the trainer decided them before the
   * loss: a mini-batch in chunks or on K workers, whose whole-batch pg denominator counts the rows kept. Absent = the
   * loss's own test on its `logProb` (which, with LoRA dropout, is not the pass the denominator was counted from).
   */
  readonly seqKeep?: tf.Tensor1D;
}

/** The per-token policy losses times the rollout IS weights when the batch has them (verl: pg_losses * rollout_is_weights). */
export function withRolloutIs(losses: tf.Tensor2D, input: PolicyLossInput): tf.Tensor2D {
  return input.rolloutIsWeights ? (tf.mul(losses, input.rolloutIsWeights) as tf.Tensor2D) : losses;
}

/** Parameters, named after the config fields (algorithm.policyLoss.* and algorithm.aggregation). */
export interface PolicyLossParams {
  /** Ignored by GSPO, which always uses seq-mean-token-mean. */
  readonly aggregation: AggregationName;
  /** ε_lo: lower clip at 1 − ε_lo (CISPO: 1.0 = no lower bound). */
  readonly clipRatioLow: number;
  /** ε_hi: upper clip at 1 + ε_hi. */
  readonly clipRatioHigh: number;
  /** Dual-clip cap c (> 1) for A < 0 in `vanilla`. */
  readonly clipRatioC: number;
  /** SAPO temperatures for positive / non-positive advantage. */
  readonly tauPos: number;
  readonly tauNeg: number;
  /** SAPO: choose τ per token by the token's advantage sign instead of the row-mean advantage. */
  readonly sapoPerTokenTau: boolean;
  /** Sequence masking (GRPO_SM), vanilla / cispo / sapo only. */
  readonly seqMask: { readonly enabled: boolean; readonly delta: number };
  /**
   * The whole mini-batch's pg-aggregation denominator when this batch is one chunk of it (gradient
   * accumulation, src/core/training/chunking.ts); absent = this batch is the whole mini-batch.
   */
  readonly pgDenominator?: number;
}

/** The aggregation a policy loss applies to pg_loss: GSPO fixes seq-mean-token-mean, the others follow the config. */
export function pgAggregation(mode: PolicyLossName, aggregation: AggregationName): AggregationName {
  return mode === 'gspo' ? 'seq-mean-token-mean' : aggregation;
}

/**
 * One signature for the family. `value` is the aggregated pg_loss; metrics (scalar tensors) use the metric
 * catalog's keys: actor/pg_clipfrac, actor/ppo_kl, actor/pg_clipfrac_lower, actor/num_masked_seqs.
 */
export type PolicyLossFn = (input: PolicyLossInput, params: PolicyLossParams) => TensorResult;
