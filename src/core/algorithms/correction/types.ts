/**
 * Types of the rollout-correction dimension (verl `algorithm.rollout_correction.*`): the rollout engine samples
 * with π_rollout, the trainer computes π_old (or π_θ); their per-token log-ratio log π_train − log π_rollout
 * drives importance weights (IS) and rejection masks (RS). Everything here runs in float64 on plain numbers
 * (no gradient flows through a weight or a mask: verl computes them under no_grad and detaches them).
 *
 * Layout: a batch is N rows padded to width T, `Matrix` [N][T], with a 0/1 `mask` [N][T] of response tokens.
 */
import type { NumberResult } from '../types';
import type { RolloutRsOption } from '../../../shared/metrics';

export type Matrix = readonly (readonly number[])[];

/** IS aggregation levels: verl's `rollout_is` (token, sequence) plus IcePop's two-sided token mask (slime, OpenRLHF). */
export type RolloutIsName = 'token' | 'sequence' | 'icepop';

export interface RolloutIsParams {
  /** verl `rollout_is_threshold`: weights are truncated above it (IcePop: tokens above it get weight 0). */
  readonly threshold: number;
  /** IcePop only: tokens whose ratio is below it get weight 0 (slime `tis_clip_low`, OpenRLHF threshold[0]). */
  readonly thresholdLower: number;
  /** verl `rollout_is_batch_normalize`: divide the truncated weights by their batch mean. */
  readonly batchNormalize: boolean;
}

/**
 * One signature for the IS family: log-ratio [N][T] (log π_train − log π_rollout, unclamped) and mask →
 * the weights [N][T] (0 on padding) to multiply each token's policy loss by, and their `rollout_corr/*` metrics.
 */
export type RolloutIsFn = (logRatio: Matrix, mask: Matrix, p: RolloutIsParams) => NumberResult<number[][]>;

/** verl's rejection options (`rollout_rs`): divergence estimator k1/k2/k3 at token level or per sequence. */
export type RolloutRsName = RolloutRsOption;

/**
 * Thresholds of one RS option. k1 options keep log(lower) ≤ k1 ≤ log(upper) (bounds given as ratios);
 * k2/k3 options keep stat ≤ upper (lower is null).
 */
export interface RsBounds {
  readonly lower: number | null;
  readonly upper: number;
}

/**
 * One signature for the RS family: log-ratio, mask and the option's bounds → the keep mask [N][T] (1 keep,
 * 0 reject; padding positions are not meaningful) and the option's `rollout_corr/rollout_rs_<option>_*` metrics.
 */
export type RolloutRsFn = (logRatio: Matrix, mask: Matrix, b: RsBounds) => NumberResult<number[][]>;

/** Bypass-mode loss types (verl `rollout_correction.loss_type`). */
export type BypassLossType = 'ppo_clip' | 'reinforce';
