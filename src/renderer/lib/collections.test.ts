import { describe, expect, it } from 'vitest';
import { groupBy, uniq } from './collections';

describe('collections', () => {
  it('uniq keeps first occurrences in order', () => {
    expect(uniq([3, 1, 3, 2, 1])).toEqual([3, 1, 2]);
  });
  it('groupBy keeps first-seen key order', () => {
    expect(groupBy(['apple', 'bean', 'avocado'], (s) => s[0])).toEqual([
      ['a', ['apple', 'avocado']],
      ['b', ['bean']],
    ]);
  });
});
