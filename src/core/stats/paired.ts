/**
 * Small-sample statistics for the arena: a mean with its 95 % t interval over seeds, and a PAIRED
 * comparison of two methods run on the same seeds (so on the same training and held-out tasks).
 *
 * Test: the paired t test (two-sided, α = 0.05) on the per-seed differences. Why t and not the exact
 * sign-flip permutation test: with N seeds the sign-flip test's smallest two-sided p is 2/2^N — 0.0625 at
 * N = 5 — so at the seed counts a laptop affords it can never say "better", whatever the effect. The t test
 * assumes roughly normal differences; the exact sign-flip p is reported beside it (N ≤ 16) as a check that
 * needs no such assumption. The 95 % interval of the difference is the t interval, so it excludes 0
 * exactly when p < 0.05.
 *
 * Seeds for 80 % power: the closed form for a paired t test at two-sided α = 0.05 from the normal
 * approximation with Guenther's (1981) small-sample correction,
 *   n = ⌈ ((z_{0.975} + z_{0.80}) / d)² + z_{0.975}² / 2 ⌉,   d = |mean difference| / sd of the differences,
 * taking the observed effect d as if it were the true one (so it is itself noisy at small N).
 */
import jStat from 'jstat';

/** z_{0.975} and z_{0.80}: the standard normal quantiles of a two-sided 5 % test and 80 % power. */
export const Z_975 = 1.959963984540054;
export const Z_80 = 0.8416212335729143;
/** The significance level of every verdict. */
export const ALPHA = 0.05;
/** Above this many pairs the exact sign-flip enumeration (2^N patterns) is skipped. */
const SIGN_FLIP_MAX_N = 16;

export interface SampleSummary {
  /** Finite values summarised. */
  readonly n: number;
  readonly mean: number | null;
  /** Unbiased (N − 1) standard deviation; null below 2 values. */
  readonly sd: number | null;
  /** mean ± t_{0.975, N−1}·sd/√N; null below 2 values. */
  readonly ci95: readonly [number, number] | null;
}

export type Verdict = 'better' | 'worse' | `not separable at ${number} seeds` | `not separable at ${number} seed`;

export interface PairedComparison {
  /** Pairs (seeds where both runs have a value). */
  readonly n: number;
  /** Seeds of the pairs, ascending. */
  readonly seeds: readonly number[];
  /** Mean of (method − baseline) over the pairs. */
  readonly diff: number | null;
  /** Unbiased sd of the differences. */
  readonly sd: number | null;
  /** 95 % t interval of the mean difference. */
  readonly ci95: readonly [number, number] | null;
  /** Two-sided paired t test p-value. */
  readonly p: number | null;
  /** Two-sided exact sign-flip permutation p-value (N ≤ 16), for a check without the normality assumption. */
  readonly pSignFlip: number | null;
  readonly test: 'paired t (two-sided)';
  readonly verdict: Verdict;
  /** Seeds the observed effect would need for 80 % power at α = 0.05 (closed form above); null without an effect. */
  readonly seedsFor80Power: number | null;
}

function finiteOnly(xs: readonly (number | null | undefined)[]): number[] {
  return xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
}

function meanOf(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

function sdOf(xs: readonly number[], mean: number): number {
  return Math.sqrt(xs.reduce((a, x) => a + (x - mean) * (x - mean), 0) / (xs.length - 1));
}

/** Quantile t_{0.975, df}. */
export function tCritical(df: number): number {
  return jStat.studentt.inv(1 - ALPHA / 2, df);
}

/**
 * Mean and 95 % t interval of the finite values; `bounds` clips the interval to a feasible range (a success
 * rate's [0, 1]) without moving the mean.
 */
export function summarize(values: readonly (number | null | undefined)[], bounds?: readonly [number, number]): SampleSummary {
  const xs = finiteOnly(values);
  if (xs.length === 0) return { n: 0, mean: null, sd: null, ci95: null };
  const mean = meanOf(xs);
  if (xs.length === 1) return { n: 1, mean, sd: null, ci95: null };
  const sd = sdOf(xs, mean);
  const half = (tCritical(xs.length - 1) * sd) / Math.sqrt(xs.length);
  let lo = mean - half;
  let hi = mean + half;
  if (bounds) {
    lo = Math.max(bounds[0], lo);
    hi = Math.min(bounds[1], hi);
  }
  return { n: xs.length, mean, sd, ci95: [lo, hi] };
}

/** The closed-form seed count for 80 % power at the effect size d = |mean diff| / sd (see the file comment). */
export function seedsFor80Power(effectSize: number): number | null {
  if (!(effectSize > 0)) return null;
  const n = ((Z_975 + Z_80) / effectSize) ** 2 + (Z_975 * Z_975) / 2;
  return Math.max(2, Math.ceil(n - 1e-9));
}

/** Exact two-sided sign-flip p: the share of the 2^N sign patterns whose |Σ ±d_i| reaches the observed |Σ d_i|. */
export function signFlipP(diffs: readonly number[]): number | null {
  const n = diffs.length;
  if (n === 0 || n > SIGN_FLIP_MAX_N) return null;
  const observed = Math.abs(diffs.reduce((a, b) => a + b, 0));
  // A tolerance so patterns equal to the observed sum up to rounding count as "as extreme".
  const tol =
    1e-12 *
    Math.max(
      1,
      diffs.reduce((a, b) => a + Math.abs(b), 0),
    );
  let extreme = 0;
  const patterns = 2 ** n;
  for (let mask = 0; mask < patterns; mask++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += mask & (1 << i) ? -diffs[i] : diffs[i];
    if (Math.abs(s) >= observed - tol) extreme++;
  }
  return extreme / patterns;
}

function notSeparable(n: number): Verdict {
  return n === 1 ? 'not separable at 1 seed' : `not separable at ${n} seeds`;
}

/**
 * Paired comparison of `method` against `baseline`, matched by seed: only seeds where both have a finite
 * value form pairs. A zero spread of the differences gives p = 0 for a non-zero mean (every seed moved by
 * the same amount) and p = 1 for a zero mean.
 */
export function pairedComparison(
  method: ReadonlyMap<number, number | null>,
  baseline: ReadonlyMap<number, number | null>,
): PairedComparison {
  const seeds = [...method.keys()]
    .filter((s) => {
      const a = method.get(s);
      const b = baseline.get(s);
      return typeof a === 'number' && Number.isFinite(a) && typeof b === 'number' && Number.isFinite(b);
    })
    .sort((x, y) => x - y);
  const diffs = seeds.map((s) => (method.get(s) as number) - (baseline.get(s) as number));
  const n = diffs.length;
  const base = { n, seeds, test: 'paired t (two-sided)' as const, pSignFlip: signFlipP(diffs) };
  if (n === 0) return { ...base, diff: null, sd: null, ci95: null, p: null, verdict: notSeparable(0), seedsFor80Power: null };
  const diff = meanOf(diffs);
  if (n === 1) return { ...base, diff, sd: null, ci95: null, p: null, verdict: notSeparable(1), seedsFor80Power: null };
  const sd = sdOf(diffs, diff);
  let p: number;
  let ci95: [number, number];
  if (sd === 0) {
    p = diff === 0 ? 1 : 0;
    ci95 = [diff, diff];
  } else {
    const se = sd / Math.sqrt(n);
    const t = diff / se;
    p = Math.min(1, 2 * (1 - jStat.studentt.cdf(Math.abs(t), n - 1)));
    const half = tCritical(n - 1) * se;
    ci95 = [diff - half, diff + half];
  }
  const verdict: Verdict = p < ALPHA ? (diff > 0 ? 'better' : 'worse') : notSeparable(n);
  const effect = sd === 0 ? (diff === 0 ? 0 : Number.POSITIVE_INFINITY) : Math.abs(diff) / sd;
  return { ...base, diff, sd, ci95, p, verdict, seedsFor80Power: seedsFor80Power(effect) };
}
