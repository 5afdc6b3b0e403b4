/**
 * Per-token divergence estimators of the rejection options (verl compute_rollout_rejection_mask), on the
 * log-ratio r = log π_train − log π_rollout clamped to ±20 (Schulman's k1/k2/k3, KL(π_rollout‖π_train)):
 *   k1 = −r,   k2 = ½ r²,   k3 = e^r − 1 − r.
 */
import { clampSafe, mapM } from './math';
import type { Matrix } from './types';

export type Estimator = 'k1' | 'k2' | 'k3';

export function tokenDivergence(logRatio: Matrix, k: Estimator): number[][] {
  return mapM(logRatio, (lr) => {
    const r = clampSafe(lr);
    return k === 'k1' ? -r : k === 'k2' ? 0.5 * r * r : Math.exp(r) - 1 - r;
  });
}

/**
 * The keep test of one statistic. k1 options are two-sided on the log scale: log(lower) ≤ stat ≤ log(upper),
 * i.e. the ratio bounds apply to π_rollout/π_train (k1 = −log-ratio). k2/k3 are one-sided: stat ≤ upper.
 */
export function keepTest(
  k: Estimator,
  lower: number | null,
  upper: number,
): { keep: (s: number) => boolean; metricUpper: number; metricLower: number } {
  if (k === 'k1') {
    const lo = Math.log(lower as number);
    const hi = Math.log(upper);
    return { keep: (s) => s >= lo && s <= hi, metricUpper: hi, metricLower: lo };
  }
  return { keep: (s) => s <= upper, metricUpper: upper, metricLower: 0 };
}
