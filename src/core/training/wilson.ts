/**
 * Wilson score interval for a binomial proportion (Wilson 1927). Unlike the normal ("Wald") interval it stays
 * inside [0, 1] and is sensible at 0 or n successes, which matters for held-out success of weak policies.
 */
import type { EvalInterval } from './types';

/** z for a two-sided 95 % interval. */
export const Z95 = 1.959963984540054;

export function wilson(successes: number, n: number, z = Z95): EvalInterval {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`wilson: n must be a non-negative integer, got ${n}`);
  if (!(successes >= 0 && successes <= n)) throw new RangeError(`wilson: successes must be in [0, ${n}], got ${successes}`);
  if (n === 0) return { rate: NaN, lo: NaN, hi: NaN, n: 0 };
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // At 0 or n successes the bound is exactly 0 or 1 analytically; avoid 1e-18 rounding residue.
  const lo = successes === 0 ? 0 : Math.max(0, centre - half);
  const hi = successes === n ? 1 : Math.min(1, centre + half);
  return { rate: p, lo, hi, n };
}

/** "41.5 % [34.9, 48.4] (n=200)" */
export function formatInterval(iv: EvalInterval, digits = 1): string {
  if (iv.n === 0) return 'n/a (n=0)';
  const pc = (x: number): string => (100 * x).toFixed(digits);
  return `${pc(iv.rate)} % [${pc(iv.lo)}, ${pc(iv.hi)}] (n=${iv.n})`;
}
