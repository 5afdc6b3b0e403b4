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
import {
  assertHasTokens,
  clampedStd,
  mapM,
  maskedMax,
  maskedMean,
  maskedMin,
  maxOf,
  mean,
  minOf,
  rowMean,
  share,
  stdUnbiased,
  SAFETY_BOUND,
} from './math';
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
    out['rollout_corr/rollout_is_ratio_fraction_high'] = maskedMean(
      mapM(weights, (w) => (w > threshold ? 1 : 0)),
      mask,
    );
    out['rollout_corr/rollout_is_ratio_fraction_low'] = maskedMean(
      mapM(weights, (w) => (w < lower ? 1 : 0)),
      mask,
    );
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
  const seq = rowMean(weights, mask);
  out['rollout_corr/rollout_is_seq_mean'] = mean(seq);
  out['rollout_corr/rollout_is_seq_std'] = seq.length > 1 ? stdUnbiased(seq) : 0;
  out['rollout_corr/rollout_is_seq_max'] = maxOf(seq);
  out['rollout_corr/rollout_is_seq_min'] = minOf(seq);
  out['rollout_corr/rollout_is_seq_max_deviation'] = maxOf(seq.map((s) => Math.abs(s - 1)));
  out['rollout_corr/rollout_is_seq_fraction_high'] = share(seq, (s) => s > threshold);
  out['rollout_corr/rollout_is_seq_fraction_low'] = share(seq, (s) => s < lower);
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
