import { mapM, maskedMean } from './math';
import { isMetrics } from './is-metrics';
import type { RolloutIsFn } from './types';

/**
 * `icepop` (IcePop, two-sided token masking; slime `icepop_function` in slime/backends/megatron_utils/loss.py,
 * OpenRLHF PolicyLoss with is_correction_type="icepop" in openrlhf/models/loss.py): a token keeps its ratio
 * ρ = exp(log π_train − log π_rollout) as its weight when lower ≤ ρ ≤ upper and gets weight 0 otherwise — a
 * hard two-sided filter instead of truncation. The response mask is not changed, so filtered tokens stay in the
 * aggregation denominators (as in both sources). No ±20 clamp (neither source clamps); no batch normalisation.
 *
 * Metrics: verl's token-level rollout_is_* on ρ (for comparison with TIS), plus slime's two IcePop diagnostics
 * as token means: rollout_corr/icepop_masked_fraction (slime `tis_clipfrac`: share of tokens whose weight is
 * not ρ) and rollout_corr/icepop_ratio_abs_dev (slime `tis_abs`: mean |ρ − 1|).
 */
export const icepopIs: RolloutIsFn = (logRatio, mask, p) => {
  const rho = mapM(logRatio, (lr) => Math.exp(lr));
  const w = mapM(rho, (r, i, j) => (r >= p.thresholdLower && r <= p.threshold ? r : 0) * mask[i][j]);
  const metrics = isMetrics(
    mapM(rho, (r, i, j) => r * mask[i][j]),
    logRatio,
    mask,
    'token',
    p.threshold,
  );
  metrics['rollout_corr/icepop_masked_fraction'] = maskedMean(
    mapM(rho, (r) => (r >= p.thresholdLower && r <= p.threshold ? 0 : 1)),
    mask,
  );
  metrics['rollout_corr/icepop_ratio_abs_dev'] = maskedMean(
    mapM(rho, (r) => Math.abs(r - 1)),
    mask,
  );
  return { value: w, metrics };
};
