/**
 * Window's rolling median is kept sorted as values come and go instead of sorted per call: it must give median()'s
 * result over the same values to the bit — ties, 0 and -0 (equal to the comparator, so their order is the stable
 * sort's), ±Infinity, NaN held for a while, the window shortened by resize.
 */
import { describe, expect, it } from 'vitest';
import { NoiseEstimator, Window, median } from './stats';

/** A deterministic stream (a linear congruential generator), drawing from few values so ties are common. */
function stream(seed: number, n: number, withNaN: boolean): number[] {
  const pool = [0, -0, 1, 1, 2, 2.5, -3, 1e-9, 7, Infinity, -Infinity, 0.1 + 0.2, 0.3];
  let x = seed;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const r = x / 2147483648;
    out.push(withNaN && r < 0.03 ? Number.NaN : r < 0.5 ? pool[Math.floor(r * 2 * pool.length)] : Math.round(r * 40) / 8);
  }
  return out;
}

describe('Window median', () => {
  it('equals median() of the window after every push, and after each resize', () => {
    for (const [seed, n, withNaN] of [
      [1, 20, false],
      [2, 5, true],
      [3, 50, false],
      [4, 9, true],
      [5, 2, false],
    ] as const) {
      const w = new Window(n);
      let ref: number[] = [];
      let len: number = n;
      for (const [i, v] of stream(seed, 3000, withNaN).entries()) {
        // Ask for the median from the start on some streams only, so the sorted copy is also built late.
        if (i === 0 && seed % 2 === 1) w.median();
        w.push(v, i);
        ref.push(v);
        if (ref.length > len) ref.shift();
        if (i % 211 === 210) {
          len = Math.max(1, len - 3);
          w.resize(len);
          ref = ref.slice(Math.max(0, ref.length - len));
        }
        if (i % 409 === 408) {
          len += 5;
          w.resize(len);
        }
        expect(Object.is(w.median(), median(ref)), `seed ${seed} at ${i}: ${w.median()} vs ${median(ref)}`).toBe(true);
      }
    }
  });

  it('NoiseEstimator: sigma over the last window first differences, as a sort of them gives', () => {
    const est = new NoiseEstimator(50);
    const diffs: number[] = [];
    let prev: number | null = null;
    for (const v of stream(7, 2000, false).filter((x) => Number.isFinite(x))) {
      est.push(v);
      if (prev !== null) {
        diffs.push(Math.abs(v - prev));
        if (diffs.length > 50) diffs.shift();
      }
      prev = v;
      expect(est.samples).toBe(diffs.length);
      expect(Object.is(est.sigma(), diffs.length === 0 ? 0 : (1.4826 * median(diffs)) / Math.SQRT2)).toBe(true);
    }
  });
});
