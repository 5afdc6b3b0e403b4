import { describe, expect, it } from 'vitest';
import { heldOutSeeds, isHeldOutSeed, isOutOfDistributionSeed, trainSeed, TRAIN_SEED_LIMIT } from './splits';

describe('splits', () => {
  it('held-out seeds are fixed, distinct and disjoint from every training seed', () => {
    const a = heldOutSeeds(200);
    const b = heldOutSeeds(200, 'out_of_distribution');
    expect(a).toEqual(heldOutSeeds(200));
    expect(heldOutSeeds('household', 200)).toEqual(a);
    expect(heldOutSeeds('shop', 200, 'out_of_distribution')).toEqual(b);
    expect(new Set([...a, ...b]).size).toBe(400);
    for (const s of [...a, ...b]) expect(s).toBeGreaterThanOrEqual(TRAIN_SEED_LIMIT);
    for (const i of [0, 1, 42, TRAIN_SEED_LIMIT - 1, TRAIN_SEED_LIMIT, 2 ** 40, -1, -(2 ** 40), Number.NaN]) {
      const s = trainSeed(i);
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThan(TRAIN_SEED_LIMIT);
      expect(isHeldOutSeed(s)).toBe(false);
    }
    expect(a.every(isHeldOutSeed) && !a.some(isOutOfDistributionSeed) && b.every(isOutOfDistributionSeed)).toBe(true);
  });
  it('rejects bad sizes and splits with a clear message', () => {
    expect(() => heldOutSeeds(0)).toThrow(/n = 0/);
    expect(() => heldOutSeeds(10, 'nope' as never)).toThrow(/valid splits: in_distribution, out_of_distribution/);
  });
});
