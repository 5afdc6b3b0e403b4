/**
 * The statistic blocks verl's IS and rejection diagnostics share (rollout_corr_helper.py `compute_is_metrics` and
 * `compute_rs_metrics` compute them alike, each on its own statistic): the token share above/below a bound, and the
 * per-sequence summary `<prefix>_seq_*`. One definition, so the two families cannot drift apart.
 */
import { mapM, maskedMean, maxOf, mean, minOf, share, stdUnbiased } from './math';
import type { Matrix } from './types';

/** Share of response tokens whose value passes `test`: verl's masked mean (count + 1e-8) of the 0/1 indicator. */
export function maskedShare(x: Matrix, mask: Matrix, test: (v: number) => boolean): number {
  return maskedMean(
    mapM(x, (v) => (test(v) ? 1 : 0)),
    mask,
  );
}

/**
 * `<prefix>_seq_{mean,std,max,min,max_deviation,fraction_high}` and, when `lower` is given, `_seq_fraction_low` of
 * one value per sequence (the caller chooses the rows: IS counts every row, rejection only rows with tokens), in
 * that order. std is torch's unbiased std (0 for one sequence); max_deviation is max |s − centre|.
 */
export function sequenceStats(
  out: Record<string, number>,
  prefix: string,
  seq: readonly number[],
  o: { readonly centre: number; readonly upper: number; readonly lower: number | null },
): void {
  out[`${prefix}_seq_mean`] = mean(seq);
  out[`${prefix}_seq_std`] = seq.length > 1 ? stdUnbiased(seq) : 0;
  out[`${prefix}_seq_max`] = maxOf(seq);
  out[`${prefix}_seq_min`] = minOf(seq);
  out[`${prefix}_seq_max_deviation`] = maxOf(seq.map((s) => Math.abs(s - o.centre)));
  out[`${prefix}_seq_fraction_high`] = share(seq, (s) => s > o.upper);
  const lower = o.lower;
  if (lower !== null) out[`${prefix}_seq_fraction_low`] = share(seq, (s) => s < lower);
}
