import { clampSafe, mapM } from './math';
import { isMetrics, truncateAndNormalize } from './is-metrics';
import type { RolloutIsFn } from './types';

/**
 * `token` (truncated IS, TIS; verl compute_rollout_correction_weights, rollout_is="token"): each token's own
 * weight exp(clamp(log-ratio, ±20)), zeroed on padding, truncated at the threshold (biased, low variance).
 * Metrics use the unclamped log-ratio and the weights before truncation.
 */
export const tokenIs: RolloutIsFn = (logRatio, mask, p) => {
  const w = mapM(logRatio, (lr, i, j) => Math.exp(clampSafe(lr)) * mask[i][j]);
  const metrics = isMetrics(w, logRatio, mask, 'token', p.threshold);
  return { value: truncateAndNormalize(w, mask, 'token', p.threshold, p.batchNormalize, metrics), metrics };
};
