/**
 * Float64 helpers with verl's exact conventions (verl/utils/torch_functional.py): `masked_sum` ignores values
 * outside the mask even when they are NaN/Inf; `masked_mean` divides by count + 1e-8 (so a fully padded row's
 * mean is 0, not NaN); the exp of a log-ratio is taken after clamping it to ±20 (`SAFETY_BOUND`).
 */
import type { Matrix } from './types';

export const SAFETY_BOUND = 20;

export function clampSafe(x: number): number {
  return Math.min(SAFETY_BOUND, Math.max(-SAFETY_BOUND, x));
}

export function mapM(a: Matrix, f: (v: number, i: number, j: number) => number): number[][] {
  return a.map((row, i) => row.map((v, j) => f(v, i, j)));
}

/** Σ over masked-in entries. */
export function maskedSum(x: Matrix, m: Matrix): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) for (let j = 0; j < x[i].length; j++) if (m[i][j] !== 0) s += x[i][j] * m[i][j];
  return s;
}

export function maskCount(m: Matrix): number {
  let s = 0;
  for (const row of m) for (const v of row) s += v;
  return s;
}

/** verl masked_mean over the whole batch: Σ(x·m) / (Σm + 1e-8). */
export function maskedMean(x: Matrix, m: Matrix): number {
  return maskedSum(x, m) / (maskCount(m) + 1e-8);
}

/** Per-row masked sum, [N]. */
export function rowSum(x: Matrix, m: Matrix): number[] {
  return x.map((row, i) => row.reduce((s, v, j) => (m[i][j] !== 0 ? s + v * m[i][j] : s), 0));
}

/** Per-row masked mean with verl's + 1e-8, [N] (0 for a fully padded row). */
export function rowMean(x: Matrix, m: Matrix): number[] {
  const s = rowSum(x, m);
  return s.map((v, i) => v / (m[i].reduce((a, b) => a + b, 0) + 1e-8));
}

/** Per-row masked max; a row with no token gets 0 (verl's seq_max). */
export function rowMax(x: Matrix, m: Matrix): number[] {
  return x.map((row, i) => {
    let best = -Infinity;
    row.forEach((v, j) => {
      if (m[i][j] !== 0 && v > best) best = v;
    });
    return best === -Infinity ? 0 : best;
  });
}

/** Rows with at least one response token. */
export function validRows(m: Matrix): boolean[] {
  return m.map((row) => row.some((v) => v !== 0));
}

/** Largest / smallest masked-in entry (−Inf / +Inf when none, as torch's masked_fill then max/min). */
export function maskedMax(x: Matrix, m: Matrix): number {
  let best = -Infinity;
  x.forEach((row, i) =>
    row.forEach((v, j) => {
      if (m[i][j] !== 0 && v > best) best = v;
    }),
  );
  return best;
}

export function maskedMin(x: Matrix, m: Matrix): number {
  let best = Infinity;
  x.forEach((row, i) =>
    row.forEach((v, j) => {
      if (m[i][j] !== 0 && v < best) best = v;
    }),
  );
  return best;
}

export function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** torch.std (unbiased, N − 1). */
export function stdUnbiased(xs: readonly number[]): number {
  const mu = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - mu) * (x - mu), 0) / (xs.length - 1));
}

export function maxOf(xs: readonly number[]): number {
  return xs.reduce((a, b) => (b > a ? b : a), -Infinity);
}

export function minOf(xs: readonly number[]): number {
  return xs.reduce((a, b) => (b < a ? b : a), Infinity);
}

/** Share of entries for which `f` holds. */
export function share(xs: readonly number[], f: (x: number) => boolean): number {
  return xs.filter(f).length / xs.length;
}

/**
 * verl's clamped standard deviation of a statistic: clamp to [lo, hi], then sqrt(max(E[x²] − E[x]², 0)) with
 * masked means; 0 when the batch has at most one token.
 */
export function clampedStd(x: Matrix, m: Matrix, lo: number, hi: number): number {
  if (!(maskCount(m) > 1)) return 0;
  // torch.clamp(min, max) with min > max gives max everywhere; Math.min(hi, Math.max(lo, v)) does the same.
  const c = mapM(x, (v) => Math.min(hi, Math.max(lo, v)));
  const mu = maskedMean(c, m);
  const v =
    maskedMean(
      mapM(c, (y) => y * y),
      m,
    ) -
    mu * mu;
  return Math.sqrt(Math.max(v, 0));
}

export function assertHasTokens(m: Matrix): void {
  if (!m.some((row) => row.some((v) => v !== 0))) throw new Error('response_mask must contain at least one valid token (1)');
}
