import { describe, expect, it } from 'vitest';
import { bandStats, clipBand, groupRuns } from './grouping';

describe('groupRuns', () => {
  it('groups by a dotted key in first-seen order, ignoring other keys such as the seed', () => {
    const runs = [
      { id: 'r1', config: { preset: 'sampo', seed: 1 } },
      { id: 'r2', config: { preset: 'grpo', seed: 1 } },
      { id: 'r3', config: { preset: 'sampo', seed: 2 } },
    ];
    expect(groupRuns(runs, 'preset')).toEqual([
      { value: 'sampo', runIds: ['r1', 'r3'] },
      { value: 'grpo', runIds: ['r2'] },
    ]);
  });
  it('puts runs without the key in a "—" group', () => {
    expect(groupRuns([{ id: 'a', config: {} }], 'optim.lr')).toEqual([{ value: '—', runIds: ['a'] }]);
  });
});

describe('bandStats', () => {
  it('computes mean, sample std and N on shared steps', () => {
    const b = bandStats([
      { x: [0, 1, 2], y: [1, 2, 3] },
      { x: [0, 1, 2], y: [3, 4, 5] },
    ]);
    expect(b.x).toEqual([0, 1, 2]);
    expect(b.mean).toEqual([2, 3, 4]);
    expect(b.std[0]).toBeCloseTo(Math.SQRT2, 12);
    expect(b.lo[0]).toBeCloseTo(2 - Math.SQRT2, 12);
    expect(b.n).toEqual([2, 2, 2]);
  });
  it('counts only runs with a finite value at a point', () => {
    const b = bandStats([
      { x: [0, 1], y: [1, null] },
      { x: [0, 1, 2], y: [3, 5, 7] },
    ]);
    expect(b.n).toEqual([2, 1, 1]);
    expect(b.mean).toEqual([2, 5, 7]);
    expect(b.std[1]).toBe(0);
  });
  it('bins when the union of x values is large', () => {
    const x = Array.from({ length: 1000 }, (_, i) => i);
    const b = bandStats(
      [
        { x, y: x.map(() => 1) },
        { x: x.map((v) => v + 0.5), y: x.map(() => 3) },
      ],
      10,
    );
    expect(b.x).toHaveLength(10);
    expect(b.mean.every((m) => m === 2)).toBe(true);
    expect(b.n.every((n) => n === 2)).toBe(true);
  });
  it('returns an empty band for no data', () => {
    expect(bandStats([]).x).toEqual([]);
    expect(bandStats([{ x: [], y: [] }]).x).toEqual([]);
  });
  it('does not join runs validated at different steps into a zig-zag: means only where every covering run logged', () => {
    // Run A validates every 10 steps, run B every 15: only 0 and 30 are shared (and B's 45, past A's span).
    const b = bandStats([
      { x: [0, 10, 20, 30], y: [0.1, 0.2, 0.3, 0.4] },
      { x: [0, 15, 30, 45], y: [0.5, 0.6, 0.7, 0.8] },
    ]);
    expect(b.x).toEqual([0, 30, 45]);
    expect(b.mean.map((m) => Number(m.toFixed(6)))).toEqual([0.3, 0.55, 0.8]);
    expect(b.n).toEqual([2, 2, 1]);
  });
  it('treats nulls of a sparse series (validation logged as NaN between validations) as not logged', () => {
    const a = [0.1, null, null, null, null, null, 0.3];
    const c = [0.5, null, null, 0.6, null, null, 0.7];
    const b = bandStats([
      { x: [0, 1, 2, 3, 4, 5, 6], y: a },
      { x: [0, 1, 2, 3, 4, 5, 6], y: c },
    ]);
    expect(b.x).toEqual([0, 6]);
    expect(b.n).toEqual([2, 2]);
  });
  it('offers a standard-error band and a min–max band beside ± std', () => {
    const series = [
      { x: [0], y: [1] },
      { x: [0], y: [2] },
      { x: [0], y: [6] },
    ];
    const std = bandStats(series);
    const se = bandStats(series, 400, 'se');
    const mm = bandStats(series, 400, 'minmax');
    expect(std.mean[0]).toBe(3);
    expect(std.hi[0] - 3).toBeCloseTo(Math.sqrt(7), 12);
    expect(se.hi[0] - 3).toBeCloseTo(Math.sqrt(7) / Math.sqrt(3), 12);
    expect(se.lo[0] - 3).toBeCloseTo(-Math.sqrt(7) / Math.sqrt(3), 12);
    expect([mm.lo[0], mm.hi[0]]).toEqual([1, 6]);
  });
  it("clips a band to the metric's range (a ratio stays within 0…1)", () => {
    const b = bandStats([
      { x: [0, 1], y: [0.0, 0.9] },
      { x: [0, 1], y: [0.2, 1.0] },
    ]);
    expect(b.lo[0]).toBeLessThan(0);
    expect(b.hi[1]).toBeGreaterThan(1);
    const c = clipBand(b, { min: 0, max: 1 });
    expect(c.lo[0]).toBe(0);
    expect(c.hi[1]).toBe(1);
    expect(c.mean).toEqual(b.mean);
    expect(clipBand(b, null)).toBe(b);
  });
});
