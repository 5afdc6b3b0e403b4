import { describe, expect, it } from 'vitest';
import { Rng, hashSeed } from './rng';

describe('Rng', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const c = new Rng(43);
    const sa = Array.from({ length: 8 }, () => a.nextUint32());
    const sb = Array.from({ length: 8 }, () => b.nextUint32());
    const sc = Array.from({ length: 8 }, () => c.nextUint32());
    expect(sa).toEqual(sb);
    expect(sa).not.toEqual(sc);
  });

  it('restores from a saved state exactly', () => {
    const a = new Rng(7);
    for (let i = 0; i < 5; i++) a.float();
    const saved = a.getState();
    const next = [a.float(), a.float(), a.int(10)];
    const b = new Rng(saved);
    expect([b.float(), b.float(), b.int(10)]).toEqual(next);
  });

  it('float is in [0,1) and int covers its range roughly uniformly', () => {
    const r = new Rng(1);
    const counts = new Array(5).fill(0);
    for (let i = 0; i < 50_000; i++) {
      const f = r.float();
      expect(f >= 0 && f < 1).toBe(true);
      counts[r.int(5)]++;
    }
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(500);
  });

  it('hashSeed separates labels', () => {
    expect(hashSeed(1, 'env')).not.toBe(hashSeed(1, 'policy'));
    expect(hashSeed(1, 'env')).toBe(hashSeed(1, 'env'));
  });

  it('rejects bad arguments with a named error', () => {
    expect(() => new Rng(Number.NaN)).toThrow(/seed/);
    expect(() => new Rng(1).int(0)).toThrow(/positive integer/);
  });
});
