/**
 * verl's IS-weight diagnostics (rollout_corr_helper.py `compute_is_metrics`), taken on the weights BEFORE
 * truncation (so fraction_high can be non-zero) but after the ±20 exp clamp and the padding zeroing.
 *
 * Details kept from verl's code:
 * - the lower reference bound is 1 / rollout_is_threshold (metrics only; verl truncates above only);
 * - sequence level: max/min/fractions come from the per-row log-ratio sums over ALL rows, fully padded rows
 *   included (their sum is 0, i.e. weight 1); max is exp(min(log max, 20)), min is exp(log min) unclamped;
 * - std and ESS use the weights clamped to [1/threshold, threshold];
 * - `rollout_is_seq_*` use the per-row masked mean of the weights over ALL rows: a fully padded row counts
 *   with mean 0 (so it is "low" in seq_fraction_low and adds 1 to seq_max_deviation).
 */
import { assertHasTokens, clampedStd, mapM, maskedMax, maskedMean, maskedMin, maxOf, minOf, rowMean, share, SAFETY_BOUND } from './math';
import { maskedShare, sequenceStats } from './stat-metrics';
import type { Matrix } from './types';

export function isMetrics(
  weights: Matrix,
  logRatioForMetrics: readonly number[] | Matrix,
  mask: Matrix,
  level: 'token' | 'sequence',
  threshold: number,
): Record<string, number> {
  assertHasTokens(mask);
  const out: Record<string, number> = {};
  const lower = 1 / threshold;
  const logUpper = Math.log(threshold);
  const logLower = Math.log(lower);
  if (level === 'sequence') {
    const sums = logRatioForMetrics as readonly number[];
    out['rollout_corr/rollout_is_max'] = Math.exp(Math.min(maxOf(sums), SAFETY_BOUND));
    out['rollout_corr/rollout_is_min'] = Math.exp(minOf(sums));
    out['rollout_corr/rollout_is_mean'] = maskedMean(weights, mask);
    out['rollout_corr/rollout_is_ratio_fraction_high'] = share(sums, (s) => s > logUpper);
    out['rollout_corr/rollout_is_ratio_fraction_low'] = share(sums, (s) => s < logLower);
  } else {
    out['rollout_corr/rollout_is_mean'] = maskedMean(weights, mask);
    out['rollout_corr/rollout_is_ratio_fraction_high'] = maskedShare(weights, mask, (w) => w > threshold);
    out['rollout_corr/rollout_is_ratio_fraction_low'] = maskedShare(weights, mask, (w) => w < lower);
    out['rollout_corr/rollout_is_max'] = maskedMax(weights, mask);
    out['rollout_corr/rollout_is_min'] = maskedMin(weights, mask);
  }
  out['rollout_corr/rollout_is_std'] = clampedStd(weights, mask, lower, threshold);
  // Effective sample size of the clamped weights, normalised by their mean (+1e-8 as verl).
  const c = mapM(weights, (w) => Math.min(threshold, Math.max(lower, w)));
  const mu = maskedMean(c, mask);
  out['rollout_corr/rollout_is_eff_sample_size'] =
    1 /
    maskedMean(
      mapM(c, (w) => (w / (mu + 1e-8)) ** 2),
      mask,
    );
  sequenceStats(out, 'rollout_corr/rollout_is', rowMean(weights, mask), { centre: 1, upper: threshold, lower });
  return out;
}

/** Truncate at the threshold and optionally divide by the batch mean (verl `rollout_is_batch_normalize`). */
export function truncateAndNormalize(
  weights: number[][],
  mask: Matrix,
  level: 'token' | 'sequence',
  threshold: number,
  batchNormalize: boolean,
  metrics: Record<string, number>,
): number[][] {
  let w = weights.map((row) => row.map((v) => Math.min(v, threshold)));
  if (!batchNormalize) return w;
  let mu: number;
  if (level === 'token') {
    mu = maskedMean(w, mask);
  } else {
    // One weight per sequence: the per-row masked mean, averaged over rows that have tokens.
    const seqW = rowMean(w, mask);
    const has = mask.map((row) => (row.reduce((a, b) => a + b, 0) > 0 ? 1 : 0));
    const n = has.reduce<number>((a, b) => a + b, 0);
    mu = seqW.reduce((s, v, i) => s + v * has[i], 0) / Math.max(n, 1e-8);
  }
  if (mu > 1e-8) {
    w = w.map((row) => row.map((v) => v / mu));
    metrics['rollout_corr/rollout_is_batch_norm_factor'] = mu;
  } else {
    metrics['rollout_corr/rollout_is_batch_norm_factor'] = 1;
  }
  return w;
}
