import { describe, expect, it } from 'vitest';
import { diffConfigs, groupableKeys } from './configDiff';
import { flatten, getPath } from './configPaths';

const a = { preset: 'sampo', seed: 1, optim: { lr: 1e-5, gradClip: 1 }, env: { name: 'sokoban', settings: { sizes: [6, 6] } } };
const b = { preset: 'grpo', seed: 2, optim: { lr: 1e-5, gradClip: 1 }, env: { name: 'sokoban', settings: { sizes: [6, 7] } } };

describe('flatten / getPath', () => {
  it('flattens nested objects to dotted paths and arrays to JSON', () => {
    expect(flatten(a)).toEqual({
      preset: 'sampo',
      seed: 1,
      'optim.lr': 1e-5,
      'optim.gradClip': 1,
      'env.name': 'sokoban',
      'env.settings.sizes': '[6,6]',
    });
  });
  it('reads a dotted path and returns undefined for a missing one', () => {
    expect(getPath(a, 'optim.lr')).toBe(1e-5);
    expect(getPath(a, 'optim.nope.deeper')).toBeUndefined();
  });
});

describe('diffConfigs', () => {
  it('keeps only differing rows by default, sorted by path', () => {
    const rows = diffConfigs([
      { id: 'a', config: a },
      { id: 'b', config: b },
    ]);
    expect(rows.map((r) => r.path)).toEqual(['env.settings.sizes', 'preset', 'seed']);
    expect(rows[1].values).toEqual(['sampo', 'grpo']);
  });
  it('shows every row when asked, flagging the differences', () => {
    const rows = diffConfigs(
      [
        { id: 'a', config: a },
        { id: 'b', config: b },
      ],
      { onlyDifferences: false },
    );
    expect(rows).toHaveLength(6);
    expect(rows.find((r) => r.path === 'optim.lr')?.differs).toBe(false);
  });
  it('marks a field missing from one run with a dash and counts it as a difference', () => {
    const rows = diffConfigs([
      { id: 'a', config: { x: 1 } },
      { id: 'b', config: { x: 1, y: 2 } },
    ]);
    expect(rows).toEqual([{ path: 'y', values: ['—', '2'], differs: true }]);
  });
});

describe('groupableKeys', () => {
  it('lists the differing keys with seed last', () => {
    expect(
      groupableKeys([
        { id: 'a', config: a },
        { id: 'b', config: b },
      ]),
    ).toEqual(['env.settings.sizes', 'preset', 'seed']);
  });
});
