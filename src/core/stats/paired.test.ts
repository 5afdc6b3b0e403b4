import { describe, expect, it } from 'vitest';
import { pairedComparison, seedsFor80Power, signFlipP, summarize, tCritical, Z_80, Z_975 } from './paired';

const seeds = (xs: number[]) => new Map(xs.map((x, i) => [i + 1, x]));

describe('summarize: mean and 95 % t interval over seeds', () => {
  it('hand-computed: [1..5] → mean 3, sd √2.5, half-width t_{0.975,4}·sd/√5', () => {
    const s = summarize([1, 2, 3, 4, 5]);
    // t_{0.975,4} = 2.7764451 (numerical integration of the t density, mpmath)
    expect(tCritical(4)).toBeCloseTo(2.7764451, 6);
    expect(s.mean).toBe(3);
    expect(s.sd).toBeCloseTo(Math.sqrt(2.5), 12);
    const half = (2.7764451 * Math.sqrt(2.5)) / Math.sqrt(5);
    expect(s.ci95![0]).toBeCloseTo(3 - half, 6);
    expect(s.ci95![1]).toBeCloseTo(3 + half, 6);
  });

  it('skips non-finite values; one value has no interval; bounds clip the interval only', () => {
    expect(summarize([0.5, null, Number.NaN])).toEqual({ n: 1, mean: 0.5, sd: null, ci95: null });
    expect(summarize([])).toEqual({ n: 0, mean: null, sd: null, ci95: null });
    const s = summarize([0, 0.1, 0], [0, 1]);
    expect(s.ci95![0]).toBe(0);
    expect(s.mean).toBeCloseTo(0.1 / 3, 12);
  });
});

describe('pairedComparison: verdicts on constructed inputs', () => {
  it('identical runs → difference 0, p = 1, not separable, no power estimate', () => {
    const a = seeds([0.2, 0.5, 0.35, 0.1, 0.6]);
    const c = pairedComparison(a, new Map(a));
    expect(c.diff).toBe(0);
    expect(c.p).toBe(1);
    expect(c.ci95).toEqual([0, 0]);
    expect(c.verdict).toBe('not separable at 5 seeds');
    expect(c.seedsFor80Power).toBeNull();
  });

  it('a large constant gap → better with p < 0.05 (and worse the other way round)', () => {
    const base = seeds([0.2, 0.5, 0.35, 0.1, 0.6]);
    const up = seeds([0.5, 0.8, 0.65, 0.4, 0.9]);
    const c = pairedComparison(up, base);
    expect(c.diff).toBeCloseTo(0.3, 12);
    expect(c.p!).toBeLessThan(0.05);
    expect(c.verdict).toBe('better');
    expect(pairedComparison(base, up).verdict).toBe('worse');
    // the same gap with seed-to-seed wobble of ±0.02 is still far beyond noise
    const wobble = seeds([0.5, 0.82, 0.63, 0.41, 0.89]);
    const w = pairedComparison(wobble, base);
    expect(w.p!).toBeLessThan(1e-4);
    expect(w.verdict).toBe('better');
    expect(w.ci95![0]).toBeGreaterThan(0.25);
  });

  it('hand-computed paired t: differences [1..5] → t = 4.2426, p = 0.013236, exact sign-flip p = 2/32', () => {
    const base = seeds([0, 0, 0, 0, 0]);
    const c = pairedComparison(seeds([1, 2, 3, 4, 5]), base);
    expect(c.n).toBe(5);
    expect(c.seeds).toEqual([1, 2, 3, 4, 5]);
    // p from integrating the t(4) density beyond 3/(√2.5/√5) (mpmath): 0.0132355996
    expect(c.p!).toBeCloseTo(0.0132356, 6);
    expect(c.pSignFlip).toBe(2 / 32);
    expect(c.verdict).toBe('better');
    const half = (2.7764451 * Math.sqrt(2.5)) / Math.sqrt(5);
    expect(c.ci95![0]).toBeCloseTo(3 - half, 6);
    // the t interval excludes 0 exactly when p < 0.05
    expect(c.ci95![0] > 0).toBe(c.p! < 0.05);
  });

  it('a small noisy difference at 3 seeds is not separable; the p-value and interval say why', () => {
    const c = pairedComparison(seeds([0.3, 0.1, 0.5]), seeds([0.2, 0.2, 0.3]));
    // diffs 0.1, −0.1, 0.2: mean 0.0667, sd 0.1528 → t = 0.756 on 2 df
    expect(c.diff).toBeCloseTo(0.2 / 3, 12);
    expect(c.p!).toBeGreaterThan(0.05);
    expect(c.ci95![0]).toBeLessThan(0);
    expect(c.verdict).toBe('not separable at 3 seeds');
  });

  it('only seeds both sides have pair up', () => {
    const c = pairedComparison(
      new Map([
        [1, 0.5],
        [2, 0.6],
        [3, null],
      ]),
      new Map([
        [1, 0.4],
        [3, 0.1],
        [4, 0.2],
      ]),
    );
    expect(c.seeds).toEqual([1]);
    expect(c.verdict).toBe('not separable at 1 seed');
    expect(c.p).toBeNull();
  });
});

describe('seeds for 80 % power: the closed form', () => {
  // n = ⌈((z_{.975} + z_{.80}) / d)² + z_{.975}²/2⌉, with z from the normal quantile (1.95996, 0.84162)
  const closedForm = (d: number) => Math.ceil(((1.959963985 + 0.841621234) / d) ** 2 + 1.959963985 ** 2 / 2);

  it('matches the closed form computed here, and the exact paired-t answers d = 0.5 → 34, d = 1 → 10', () => {
    expect(Z_975).toBeCloseTo(1.959963985, 9);
    expect(Z_80).toBeCloseTo(0.841621234, 9);
    for (const d of [0.2, 0.35, 0.5, 0.8, 1, 1.5, 3]) expect(seedsFor80Power(d), `d = ${d}`).toBe(Math.max(2, closedForm(d)));
    // exact noncentral-t power (e.g. R's pwr.t.test, paired): 33.4 → 34 at d = 0.5, 9.9 → 10 at d = 1
    expect(seedsFor80Power(0.5)).toBe(34);
    expect(seedsFor80Power(1)).toBe(10);
    expect(seedsFor80Power(0)).toBeNull();
  });

  it('the comparison reports it for its observed effect size', () => {
    // diffs 0.1, −0.1, 0.2 → d = (0.2/3) / 0.152753 = 0.4364
    const c = pairedComparison(seeds([0.3, 0.1, 0.5]), seeds([0.2, 0.2, 0.3]));
    const d = 0.2 / 3 / Math.sqrt(((0.1 - 0.2 / 3) ** 2 + (-0.1 - 0.2 / 3) ** 2 + (0.2 - 0.2 / 3) ** 2) / 2);
    expect(c.seedsFor80Power).toBe(closedForm(d));
    expect(c.seedsFor80Power).toBe(44);
  });
});

describe('exact sign-flip p', () => {
  it('enumerates the 2^N sign patterns', () => {
    expect(signFlipP([1, 1, 1])).toBe(2 / 8);
    // [1, −1]: every pattern has |sum| ≥ 0
    expect(signFlipP([1, -1])).toBe(1);
    // [3, 1]: patterns sums 4, 2, −2, −4 → |s| ≥ 4 for two of four
    expect(signFlipP([3, 1])).toBe(0.5);
    expect(signFlipP([])).toBeNull();
  });
});
