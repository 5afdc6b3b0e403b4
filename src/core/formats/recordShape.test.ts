import { describe, expect, it } from 'vitest';
import { RecordShapes, recordShape } from './recordShape';

describe('record shapes', () => {
  it('copies hold the keys in the given order, any name included, and serialise as a plainly built object does', () => {
    const keys = ['z', 'a/b', '__proto__', 'constructor', 'é "q"', '10', ...Array.from({ length: 150 }, (_, i) => `k${i}`)];
    const shape = recordShape(keys);
    const a = { ...shape };
    const b = { ...shape };
    const plain: Record<string, number> = {};
    keys.forEach((k, i) => {
      a[k] = i + 0.25;
      b[k] = -i;
      Object.defineProperty(plain, k, { value: i + 0.25, enumerable: true, writable: true, configurable: true });
    });
    // Integer-like keys come first in any object (JS property order); the others keep the given order.
    expect(Object.keys(a)).toEqual(Object.keys(plain));
    expect(JSON.stringify(a)).toBe(JSON.stringify(plain));
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(a, '__proto__')).toBe(true);
    expect(b.k3).toBe(-9);
    expect(shape.k3).toBe(0.5);
  });

  it('gives one shape per key list', () => {
    const s = new RecordShapes();
    expect(s.get(['a', 'b'])).toBe(s.get(['a', 'b']));
    expect(s.get(['b', 'a'])).not.toBe(s.get(['a', 'b']));
    expect(Object.keys(s.get(['b', 'a']))).toEqual(['b', 'a']);
  });
});
