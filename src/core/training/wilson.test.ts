import { describe, expect, it } from 'vitest';
import { wilson } from './wilson';

describe('wilson', () => {
  it('matches a hand-computed interval (8/20)', () => {
    // p=0.4, z=1.96: centre=(0.4+0.09604)/1.19208=0.41611, half=1.96*sqrt(0.012+0.0024010)/1.19208=0.19730
    const iv = wilson(8, 20);
    expect(iv.rate).toBeCloseTo(0.4, 12);
    expect(iv.lo).toBeCloseTo(0.2188, 3);
    expect(iv.hi).toBeCloseTo(0.6134, 3);
  });
  it('stays inside [0,1] at the edges and is non-degenerate', () => {
    const zero = wilson(0, 50);
    expect(zero.lo).toBe(0);
    expect(zero.hi).toBeGreaterThan(0.05);
    const all = wilson(50, 50);
    expect(all.hi).toBe(1);
    expect(all.lo).toBeLessThan(0.95);
  });
  it('n=0 gives NaN, bad input throws', () => {
    expect(Number.isNaN(wilson(0, 0).rate)).toBe(true);
    expect(() => wilson(3, 2)).toThrow(/successes/);
    expect(() => wilson(1, 2.5)).toThrow(/n must/);
  });
});
