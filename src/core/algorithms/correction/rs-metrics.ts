/**
 * verl's per-option rejection diagnostics (rollout_corr_helper.py `compute_rs_metrics` plus the two masked
 * fractions computed beside it), under `rollout_corr/rollout_rs_<option>_*`.
 *
 * Details kept from verl's code: sequence statistics (max/min/fractions at sequence level, seq_*) use only rows
 * with at least one token; `_mean` is the token-weighted masked mean of the (broadcast) statistic; `_std`
 * clamps the statistic to [lower, upper] (k1: the log bounds; else [0, upper]); seq_fraction_low exists for k1
 * options only; the per-option seq_masked_fraction counts rows with tokens only.
 */
import { assertHasTokens, clampedStd, mapM, maskedMax, maskedMean, maskedMin, maxOf, minOf, rowMean, share, validRows } from './math';
import { maskedShare, sequenceStats } from './stat-metrics';
import type { Matrix } from './types';

export interface RsMetricInput {
  readonly option: string;
  /** The statistic per token [N][T] (a sequence statistic broadcast over its row). */
  readonly perToken: Matrix;
  /** The statistic per row for sequence-level options; null for token-level ones. */
  readonly perSequence: readonly number[] | null;
  readonly keep: Matrix;
  readonly upper: number;
  readonly lower: number;
  readonly applyLower: boolean;
}

export function rsMetrics(mask: Matrix, x: RsMetricInput): Record<string, number> {
  assertHasTokens(mask);
  const p = `rollout_corr/rollout_rs_${x.option}`;
  const out: Record<string, number> = {};
  const valid = validRows(mask);
  const seqAll = x.perSequence ?? rowMean(x.perToken, mask);
  const seq = seqAll.filter((_, i) => valid[i]);
  const sequenceLevel = x.perSequence !== null && seq.length > 0;
  out[`${p}_mean`] = maskedMean(x.perToken, mask);
  out[`${p}_max`] = sequenceLevel ? maxOf(seq) : maskedMax(x.perToken, mask);
  out[`${p}_min`] = sequenceLevel ? minOf(seq) : maskedMin(x.perToken, mask);
  if (sequenceLevel) {
    out[`${p}_fraction_high`] = share(seq, (s) => s > x.upper);
    out[`${p}_fraction_low`] = x.applyLower ? share(seq, (s) => s < x.lower) : 0;
  } else {
    out[`${p}_fraction_high`] = maskedShare(x.perToken, mask, (s) => s > x.upper);
    out[`${p}_fraction_low`] = x.applyLower ? maskedShare(x.perToken, mask, (s) => s < x.lower) : 0;
  }
  out[`${p}_std`] = clampedStd(x.perToken, mask, x.applyLower ? x.lower : 0, x.upper);
  sequenceStats(out, p, seq, { centre: 0, upper: x.upper, lower: x.applyLower ? x.lower : null });
  // Share of response tokens this option rejects, and share of rows with tokens where it rejects any.
  out[`${p}_masked_fraction`] = maskedMean(
    mapM(x.keep, (k) => 1 - k),
    mask,
  );
  const rowsWithTokens = valid.filter(Boolean).length;
  const rejectedRows = mask.filter((row, i) => valid[i] && row.some((m, j) => m !== 0 && x.keep[i][j] === 0)).length;
  out[`${p}_seq_masked_fraction`] = rowsWithTokens > 0 ? rejectedRows / rowsWithTokens : 0;
  return out;
}
