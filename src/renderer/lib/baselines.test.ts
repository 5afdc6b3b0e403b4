import { describe, expect, it } from 'vitest';
import type { RunBaselines } from '../../shared/api';
import {
  baselineCells,
  baselineError,
  baselineParts,
  fmtInterval,
  groupBaselineErrors,
  groupNoBaselines,
  noBaselinesReason,
  warmStartTitle,
} from './baselines';

const base: RunBaselines = {
  env: 'sokoban',
  episodes: 64,
  random: { rate: 0.046875, lo: 0.0161, hi: 0.1289, n: 64 },
  expert: { rate: 1, lo: 0.9435, hi: 1, n: 64 },
  warmStart: null,
};

describe('baselines line', () => {
  it('writes rates as percentages with their interval', () => {
    expect(fmtInterval(base.random)).toBe('4.7 % [1.6–12.9]');
    expect(baselineParts(base)).toEqual(['random 4.7 % [1.6–12.9]', 'expert 100.0 % [94.3–100.0]']);
  });

  it('adds the shipped warm start with its own n, and leaves it out when it has no numbers', () => {
    const ws = {
      source: 'shipped:sokoban@abc',
      greedy: { rate: 0, lo: 0, hi: 0.0188, n: 200 },
      sampled: { rate: 0.06, lo: 0.0347, hi: 0.1019, n: 200 },
      sampledTemperature: 0.6,
      note: null,
    };
    expect(baselineParts({ ...base, warmStart: ws })[2]).toBe('warm start 0.0 % greedy / 6.0 % sampled (n = 200)');
    expect(baselineParts({ ...base, warmStart: { ...ws, greedy: undefined } })[2]).toBe('warm start 6.0 % sampled (n = 200)');
    expect(baselineParts({ ...base, warmStart: { source: 'shipped:sokoban', sampledTemperature: null, note: 'missing' } })).toHaveLength(2);
    expect(warmStartTitle({ ...base, warmStart: ws })).toContain('sampled (T 0.6) 6.0 % [3.5–10.2] on 200 held-out tasks');
  });

  it('errors say what to do', () => {
    expect(baselineError({ code: 'UNAVAILABLE', message: 'no env', hint: 'start a real run' })).toBe('no env — start a real run');
    const cells = baselineCells(
      ['a', 'b'],
      [
        { ok: true, value: base },
        { ok: false, error: { code: 'NOT_FOUND', message: 'no run with id "b"' } },
      ],
    );
    expect(cells.get('a')).toEqual({ value: base });
    expect(cells.get('b')).toEqual({ error: 'no run with id "b"' });
  });
});

describe('groupBaselineErrors', () => {
  it('says a reason once for every run it applies to, and keeps other texts on lines of their own', () => {
    const why = 'has no config.env, so there are no validation tasks to run baselines on — synthetic demo runs have no environment config';
    const groups = groupBaselineErrors([
      { id: 'r1', name: 'calm', error: `run r1 ${why}` },
      { id: 'r2', name: 'calm', error: `run r2 ${why}` },
      { id: 'r3', name: 'old', error: 'run r3 trained on environment "maze", which this build does not have' },
      { id: 'r4', name: 'odd', error: 'the server could not be reached' },
    ]);
    expect(groups).toEqual([
      {
        runs: [
          { id: 'r1', name: 'calm' },
          { id: 'r2', name: 'calm' },
        ],
        reason: `each ${why}`,
      },
      { runs: [{ id: 'r3', name: 'old' }], reason: 'it trained on environment "maze", which this build does not have' },
      { runs: [{ id: 'r4', name: 'odd' }], reason: 'the server could not be reached' },
    ]);
  });
});

describe('noBaselinesReason', () => {
  const env = { name: 'sokoban', settings: {} };
  it('is null for a run with an environment, whatever its kind, and names why for one without', () => {
    expect(noBaselinesReason({ kind: 'lab', tags: [], config: { env } })).toBeNull();
    expect(noBaselinesReason({ kind: 'imported', tags: ['synthetic'], config: { env } })).toBeNull();
    expect(noBaselinesReason({ kind: 'imported', tags: [], config: {} })).toMatch(/^imported from a training log/);
    expect(noBaselinesReason({ tags: ['synthetic'], config: { env: null } })).toMatch(/^synthetic demo curves/);
    expect(noBaselinesReason({ kind: 'lab', tags: [], config: { env: 'sokoban' } })).toMatch(/^no environment in the config/);
  });

  it('groups runs by reason in first-seen order', () => {
    expect(
      groupNoBaselines([
        { id: 'a', name: 'A', reason: 'x' },
        { id: 'b', name: 'B', reason: 'y' },
        { id: 'c', name: 'C', reason: 'x' },
      ]),
    ).toEqual([
      {
        runs: [
          { id: 'a', name: 'A' },
          { id: 'c', name: 'C' },
        ],
        reason: 'x',
      },
      { runs: [{ id: 'b', name: 'B' }], reason: 'y' },
    ]);
  });
});
