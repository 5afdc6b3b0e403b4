/**
 * Dimension 5 — rollout correction (beyond the paper; verl `algorithm.rollout_correction.*`): the rollout engine
 * (here onnxruntime, in verl vLLM/SGLang) and the trainer (tfjs, FSDP) disagree on log-probs, so the batch is
 * off-policy even before the first update. Three closed catalogs, one signature each:
 *   - ROLLOUT_IS      importance weights (token, sequence; IcePop's two-sided token mask)   is-*.ts
 *   - ROLLOUT_RS      rejection masks, chainable (token_k*, seq_sum_k*, seq_mean_k*, seq_max_k2|k3)   rs-*.ts
 *   - BYPASS_LOSSES   bypass mode (π_old := π_rollout): ppo_clip or reinforce               bypass.ts
 * `rolloutCorrection` (pipeline.ts) runs verl's compute_rollout_correction_and_rejection_mask. Sources per
 * variant: docs/guides/rollout-correction.md.
 */
import { makeCatalog } from '../catalog';
import { bypassPpoClip, bypassReinforce, type BypassLossFn } from './bypass';
import type { BypassLossType } from './types';

export type { BypassLossType, Matrix, RolloutIsFn, RolloutIsName, RolloutIsParams, RolloutRsFn, RolloutRsName, RsBounds } from './types';
export { parseRsOptions, parseRsThresholds, RolloutCorrectionError } from './thresholds';
export { offPolicyMetrics } from './offpolicy';
export { ROLLOUT_IS, ROLLOUT_RS, rejectionMask, rolloutCorrection } from './pipeline';
export type { RolloutCorrectionParams, RolloutCorrectionResult } from './pipeline';
export type { BypassLossFn, BypassParams } from './bypass';

/** Bypass-mode policy losses (verl rollout_correction.loss_type), used instead of algorithm.policyLoss.mode. */
export const BYPASS_LOSSES = makeCatalog<BypassLossType, BypassLossFn>('bypass loss type', {
  ppo_clip: {
    name: 'ppo_clip',
    summary: 'PPO-clip (dual clip) with π_old := π_rollout on the rejection-masked tokens; no extra IS weight.',
    fn: bypassPpoClip,
  },
  reinforce: {
    name: 'reinforce',
    summary: 'REINFORCE −A·log π_θ·sg(w) with the rollout IS weights on the rejection-masked tokens.',
    fn: bypassReinforce,
  },
});
