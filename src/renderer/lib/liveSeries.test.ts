import { describe, expect, it } from 'vitest';
import { appendRecords, fromStored } from './liveSeries';

describe('live series', () => {
  const stored = fromStored([{ key: 'a', steps: [0, 1], y: [1, null], nonFinite: [{ step: 1, value: 'NaN' }] }]);
  it('appends only new steps, in order, and marks nulls as non-finite', () => {
    const next = appendRecords(stored, ['a', 'b'], [
      { step: 3, values: { a: 5, b: 1 } },
      { step: 1, values: { a: 99 } },
      { step: 2, values: { a: null } },
    ]);
    expect(next.get('a')).toEqual({ steps: [0, 1, 2, 3], y: [1, null, null, 5], nonFinite: [{ step: 1, value: 'NaN' }, { step: 2, value: 'non-finite' }] });
    expect(next.get('b')?.steps).toEqual([3]);
  });
  it('leaves the previous map and arrays untouched', () => {
    appendRecords(stored, ['a'], [{ step: 5, values: { a: 1 } }]);
    expect(stored.get('a')?.steps).toEqual([0, 1]);
  });
});
