import { clampSafe, rowSum } from './math';
import { isMetrics, truncateAndNormalize } from './is-metrics';
import type { RolloutIsFn } from './types';

/**
 * `sequence` (verl rollout_is="sequence"): one weight per row, the product of its token ratios
 * exp(clamp(Σ_t m·log-ratio, ±20)), broadcast over the row's tokens, truncated at the threshold
 * (unbiased per sequence, high variance).
 */
export const sequenceIs: RolloutIsFn = (logRatio, mask, p) => {
  const sums = rowSum(logRatio, mask);
  const w = logRatio.map((row, i) => row.map((_, j) => Math.exp(clampSafe(sums[i])) * mask[i][j]));
  const metrics = isMetrics(w, sums, mask, 'sequence', p.threshold);
  return { value: truncateAndNormalize(w, mask, 'sequence', p.threshold, p.batchNormalize, metrics), metrics };
};
