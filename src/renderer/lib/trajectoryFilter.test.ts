import { describe, expect, it } from 'vitest';
import { episodeCounts, filterEpisodes } from './trajectoryFilter';

const T = [
  { won: true, split: 'train' as const },
  { won: false, split: 'train' as const },
  { won: false, split: 'val' as const },
  { won: true, split: 'val' as const },
  { won: false, split: 'train' as const },
];

describe('trajectory filters', () => {
  it('keeps positions of the episodes that pass both filters', () => {
    expect(filterEpisodes(T, { outcome: 'all', split: 'all' })).toEqual([0, 1, 2, 3, 4]);
    expect(filterEpisodes(T, { outcome: 'won', split: 'all' })).toEqual([0, 3]);
    expect(filterEpisodes(T, { outcome: 'lost', split: 'train' })).toEqual([1, 4]);
    expect(filterEpisodes(T, { outcome: 'won', split: 'val' })).toEqual([3]);
    expect(filterEpisodes(T.slice(0, 2), { outcome: 'all', split: 'val' })).toEqual([]);
  });
  it('counts outcomes and splits', () => {
    expect(episodeCounts(T)).toEqual({ won: 2, lost: 3, train: 3, val: 2 });
    expect(episodeCounts([])).toEqual({ won: 0, lost: 0, train: 0, val: 0 });
  });
});
