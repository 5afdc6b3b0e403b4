import { describe, expect, it } from 'vitest';
import { bandStats, groupRuns } from './grouping';

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
    const b = bandStats([{ x, y: x.map(() => 1) }, { x: x.map((v) => v + 0.5), y: x.map(() => 3) }], 10);
    expect(b.x).toHaveLength(10);
    expect(b.mean.every((m) => m === 2)).toBe(true);
    expect(b.n.every((n) => n === 2)).toBe(true);
  });
  it('returns an empty band for no data', () => {
    expect(bandStats([]).x).toEqual([]);
    expect(bandStats([{ x: [], y: [] }]).x).toEqual([]);
  });
});
