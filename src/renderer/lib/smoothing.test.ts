import { describe, expect, it } from 'vitest';
import { debiasedEma, runningMean, smooth } from './smoothing';

describe('debiasedEma', () => {
  it('starts at the first value (debiased), not at zero', () => {
    const out = debiasedEma([10, 10, 10], 0.9);
    expect(out[0]).toBeCloseTo(10, 12);
    expect(out[2]).toBeCloseTo(10, 12);
  });
  it('matches a hand computation', () => {
    // w = 0.5: acc1 = 0.5·1 = 0.5 → /0.5 = 1; acc2 = 0.25 + 1.5 = 1.75 → /0.75 = 2.3333
    const out = debiasedEma([1, 3], 0.5);
    expect(out[0]).toBeCloseTo(1, 12);
    expect(out[1]).toBeCloseTo(1.75 / 0.75, 12);
  });
  it('keeps non-finite points as null in place and skips them in the state', () => {
    const out = debiasedEma([1, null, Number.NaN, 3], 0.5);
    expect(out[1]).toBeNull();
    expect(out[2]).toBeNull();
    expect(out[3]).toBeCloseTo(1.75 / 0.75, 12);
    expect(out).toHaveLength(4);
  });
  it('weight 0 returns the raw values', () => {
    expect(debiasedEma([1, 5, -2], 0)).toEqual([1, 5, -2]);
  });
  it('rejects a weight outside [0, 1)', () => {
    expect(() => debiasedEma([1], 1)).toThrow(/weight/);
  });
});

describe('runningMean', () => {
  it('averages the trailing window', () => {
    expect(runningMean([1, 2, 3, 4], 2)).toEqual([1, 1.5, 2.5, 3.5]);
  });
  it('skips nulls without dropping them', () => {
    expect(runningMean([2, null, 4], 3)).toEqual([2, null, 3]);
  });
  it('rejects a bad window', () => {
    expect(() => runningMean([1], 0)).toThrow(/window/);
  });
});

describe('smooth', () => {
  it('none copies the data', () => {
    const y = [1, null, 2];
    const out = smooth(y, 'none', 0.9);
    expect(out).toEqual(y);
    expect(out).not.toBe(y);
  });
  it('mean with strength 0 is the raw data', () => {
    expect(smooth([3, 1, 2], 'mean', 0)).toEqual([3, 1, 2]);
  });
});
