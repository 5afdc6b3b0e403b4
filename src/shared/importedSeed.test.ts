import { describe, expect, it } from 'vitest';
import { configAt, importedSeed } from './importedSeed';

describe('importedSeed', () => {
  it('reads seed, then data.seed (verl), then trainer.seed, nested or flattened', () => {
    expect(importedSeed({ seed: 7, data: { seed: 1 } })).toBe(7);
    expect(importedSeed({ data: { seed: 42 }, trainer: { seed: 3 } })).toBe(42);
    expect(importedSeed({ 'trainer.seed': 3 })).toBe(3);
    expect(importedSeed({ seed: 0 })).toBe(0);
  });

  it('is null when the config names none or only unusable values', () => {
    expect(importedSeed({})).toBeNull();
    expect(importedSeed(undefined)).toBeNull();
    expect(importedSeed({ seed: -1, data: { seed: 1.5 }, trainer: { seed: '3' } })).toBeNull();
    expect(importedSeed({ seed: 2 ** 31 })).toBeNull();
  });

  it('configAt walks dotted paths and stops at non-objects', () => {
    expect(configAt({ a: { b: { c: 1 } } }, 'a.b.c')).toBe(1);
    expect(configAt({ a: [1] }, 'a.0')).toBeUndefined();
    expect(configAt({ a: 1 }, 'a.b')).toBeUndefined();
  });
});
