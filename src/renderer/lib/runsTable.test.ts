import { describe, expect, it } from 'vitest';
import { summaryRun as run } from '../testing/runSummary';
import {
  COLUMNS_STORAGE_KEY,
  SUMMARY_COLUMNS,
  filterRuns,
  summaryColumnChoices,
  fmtValSuccess,
  loadColumns,
  loadSelection,
  parseTags,
  runEta,
  runSuccess,
  runValSuccess,
  saveColumns,
  saveSelection,
  SELECTION_STORAGE_KEY,
  shortId,
  sortRuns,
  summaryValue,
  valMode,
} from './runsTable';

const runs = [
  run({ id: 'a', name: 'Alpha', preset: 'grpo', status: 'running', summary: { 'episode/success_rate': 0.4 }, tags: ['base'] }),
  run({ id: 'b', name: 'beta', env: 'frozenlake', summary: { 'episode/success_rate': 0.7 } }),
  run({ id: 'c', name: 'Gamma', status: 'failed', summary: {} }),
];

describe('filterRuns', () => {
  it('searches name, preset, env and tags, all words must match', () => {
    expect(filterRuns(runs, { search: 'alpha grpo' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRuns(runs, { search: 'base' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRuns(runs, { search: 'frozen' }).map((r) => r.id)).toEqual(['b']);
  });
  it('filters by status, "active" and env', () => {
    expect(filterRuns(runs, { status: 'active' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRuns(runs, { status: 'failed' }).map((r) => r.id)).toEqual(['c']);
    expect(filterRuns(runs, { env: 'sokoban' }).map((r) => r.id)).toEqual(['a', 'c']);
  });
});

describe('sortRuns', () => {
  it('sorts by success with missing values last in both directions', () => {
    expect(sortRuns(runs, 'success', 'desc').map((r) => r.id)).toEqual(['b', 'a', 'c']);
    expect(sortRuns(runs, 'success', 'asc').map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
  it('sorts names case-insensitively', () => {
    expect(sortRuns(runs, 'name', 'asc').map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
});

describe('parseTags', () => {
  it('trims, drops empties and duplicates', () => {
    expect(parseTags(' a, b,,a , c ')).toEqual(['a', 'b', 'c']);
  });
});

describe('seed, short id, validation and ETA columns', () => {
  it('shortId keeps the random tail of a generated id and short ids whole', () => {
    expect(shortId('20261201-215500-sokoban-sampo-a1b2c3')).toBe('a1b2c3');
    expect(shortId('abc')).toBe('abc');
  });

  it('runValSuccess gives the last validation success with its 95 % Wilson interval from val/episodes', () => {
    // 8 of 32: Wilson 95 % is [0.1325, 0.4211].
    const v = runValSuccess(run({ id: 'v', summary: { 'val/success_rate': 0.25, 'val/episodes': 32, 'episode/success_rate': 0.9 } }));
    expect(v?.rate).toBe(0.25);
    expect(v?.n).toBe(32);
    expect(v?.lo).toBeCloseTo(0.1325, 3);
    expect(v?.hi).toBeCloseTo(0.421, 3);
    expect(fmtValSuccess(v)).toBe('25.0 % [13.3–42.1]');
  });

  it('matches the published Wilson intervals of Newcombe (1998), Table I, method 3', () => {
    const cases = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ] as const;
    for (const [k, n, lo, hi] of cases) {
      const v = runValSuccess(run({ id: 'w', summary: { 'val/success_rate': k / n, 'val/episodes': n } }));
      expect(v?.lo).toBeCloseTo(lo, 4);
      expect(v?.hi).toBeCloseTo(hi, 4);
    }
  });

  it('runValSuccess pins 0 and n successes to the bound and drops the interval without an episode count', () => {
    const zero = runValSuccess(run({ id: 'z', summary: { 'val/success_rate': 0, 'val/episodes': 16 } }));
    expect(zero?.lo).toBe(0);
    expect(zero?.hi).toBeGreaterThan(0.15);
    const all = runValSuccess(run({ id: 'o', summary: { 'val/success_rate': 1, 'val/episodes': 16 } }));
    expect(all?.hi).toBe(1);
    const noN = runValSuccess(run({ id: 'n', summary: { 'val/success_rate': 0.5 } }));
    expect(noN).toEqual({ rate: 0.5, key: 'val/success_rate', lo: null, hi: null, n: null });
    expect(fmtValSuccess(noN)).toBe('50.0 %');
    expect(runValSuccess(run({ id: 't', summary: { 'episode/success_rate': 0.5 } }))).toBeNull();
    expect(fmtValSuccess(null)).toBe('—');
  });

  it('an imported verl run (scores, no success rates) gets its validation and training headline from val/score_mean and episode/score_mean', () => {
    // What the store folds for play-verl_verl_qwen2_7b_min.log: val-core/openai/gsm8k/reward/mean@1 → val/score_mean.
    const verl = run({
      id: 'verl',
      kind: 'imported',
      summary: { 'episode/score_mean': 0.93, 'val/score_mean': 0.821, 'best/val/score_mean': 0.874 },
    });
    expect(runValSuccess(verl)).toEqual({ rate: 0.821, key: 'val/score_mean', lo: null, hi: null, n: null });
    expect(fmtValSuccess(runValSuccess(verl))).toBe('82.1 %');
    expect(runSuccess(verl)).toBe(0.93);
    // A run with both keeps its success rates.
    expect(runSuccess(run({ id: 'lab', summary: { 'episode/success_rate': 0.5, 'episode/score_mean': 0.7 } }))).toBe(0.5);
  });

  it('offers every headline number the runs carry as a column, the named ones first', () => {
    const verl = run({
      id: 'v',
      kind: 'imported',
      summary: { 'val/score_mean': 0.8, 'best/val/score_mean': 0.87, 'episode/score_mean': 0.9 },
    });
    const keys = summaryColumnChoices([verl, run({ id: 'l', summary: { 'episode/success_rate': 0.5 } })]).map((c) => c.key);
    expect(keys.slice(0, 9)).toEqual(SUMMARY_COLUMNS.map((c) => c.key));
    expect(keys.slice(9)).toEqual(['episode/success_rate', 'val/score_mean']);
  });

  it('valMode says greedy at temperature 0, sampled with its temperature above, nothing when unknown', () => {
    expect(valMode(run({ id: 'g', valTemperature: 0 }))).toBe('greedy');
    expect(valMode(run({ id: 's', valTemperature: 0.6 }))).toBe('sampled (T 0.6)');
    expect(valMode(run({ id: 'i', valTemperature: null }))).toBeNull();
    expect(valMode(run({ id: 'u' }))).toBeNull();
  });

  it('runEta is the estimate of running runs only', () => {
    expect(runEta(run({ id: 'r', status: 'running', etaSeconds: 95 }))).toBe(95);
    expect(runEta(run({ id: 'p', status: 'paused', etaSeconds: 95 }))).toBeNull();
    expect(runEta(run({ id: 'c', status: 'completed', etaSeconds: null }))).toBeNull();
    expect(runEta(run({ id: 'u', status: 'running' }))).toBeNull();
  });

  it('sorts by seed, validation (never-validated last) and ETA', () => {
    const rs = [
      run({ id: 'a', seed: 3, summary: { 'val/success_rate': 0.2 } }),
      run({ id: 'b', seed: 1, summary: {} }),
      run({ id: 'c', seed: 2, summary: { 'val/success_rate': 0.6 } }),
    ];
    expect(sortRuns(rs, 'seed', 'asc').map((r) => r.id)).toEqual(['b', 'c', 'a']);
    expect(sortRuns(rs, 'validation', 'desc').map((r) => r.id)).toEqual(['c', 'a', 'b']);
    const live = [
      run({ id: 'x', status: 'running', etaSeconds: 300 }),
      run({ id: 'y', status: 'completed' }),
      run({ id: 'w', status: 'running', etaSeconds: 20 }),
    ];
    expect(sortRuns(live, 'eta', 'asc').map((r) => r.id)).toEqual(['w', 'x', 'y']);
  });
});

function memory(): Storage {
  const m = new Map<string, string>();
  return {
    getItem: (k) => m.get(k) ?? null,
    setItem: (k, v) => void m.set(k, v),
    removeItem: (k) => void m.delete(k),
    clear: () => m.clear(),
    key: () => null,
    get length() {
      return m.size;
    },
  };
}

describe('added summary columns', () => {
  it('sorts by a summary key, runs without it last either way', () => {
    const rs = [
      run({ id: 'a', summary: { 'best/val/success_rate': 0.3 } }),
      run({ id: 'b', summary: {} }),
      run({ id: 'c', summary: { 'best/val/success_rate': 0.9 } }),
      run({ id: 'd', summary: { 'best/val/success_rate': null } }),
    ];
    expect(sortRuns(rs, 'summary:best/val/success_rate', 'desc').map((r) => r.id)).toEqual(['c', 'a', 'b', 'd']);
    expect(sortRuns(rs, 'summary:best/val/success_rate', 'asc').map((r) => r.id)).toEqual(['a', 'c', 'b', 'd']);
    expect(summaryValue(rs[3], 'best/val/success_rate')).toBeNull();
  });

  it('keeps the chosen columns in the order added and drops malformed entries', () => {
    const s = memory();
    expect(loadColumns(s)).toEqual([]);
    saveColumns(s, ['actor/grad_norm', 'best/val/success_rate']);
    expect(s.getItem(COLUMNS_STORAGE_KEY)).toBe('["actor/grad_norm","best/val/success_rate"]');
    // In the order added (any summary key may be a column now).
    expect(loadColumns(s)).toEqual(['actor/grad_norm', 'best/val/success_rate']);
    s.setItem(COLUMNS_STORAGE_KEY, '["val/score_mean", 4, "has space", "actor/entropy"]');
    expect(loadColumns(s)).toEqual(['val/score_mean', 'actor/entropy']);
    s.setItem(COLUMNS_STORAGE_KEY, 'not json');
    expect(loadColumns(s)).toEqual([]);
    expect(loadColumns(undefined)).toEqual([]);
  });
});

describe('ticked runs in session storage', () => {
  it('round-trips the ids and reads a missing, corrupt or foreign entry as none', () => {
    const s = memory();
    expect(loadSelection(s)).toEqual([]);
    saveSelection(s, ['a', 'b']);
    expect(s.getItem(SELECTION_STORAGE_KEY)).toBe('["a","b"]');
    expect(loadSelection(s)).toEqual(['a', 'b']);
    s.setItem(SELECTION_STORAGE_KEY, '{not json');
    expect(loadSelection(s)).toEqual([]);
    s.setItem(SELECTION_STORAGE_KEY, '{"a":1}');
    expect(loadSelection(s)).toEqual([]);
    s.setItem(SELECTION_STORAGE_KEY, '["a", 3, "a", "c"]');
    expect(loadSelection(s)).toEqual(['a', 'c']);
    expect(loadSelection(undefined)).toEqual([]);
  });
});
