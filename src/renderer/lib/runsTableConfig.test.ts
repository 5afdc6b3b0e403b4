/**
 * Runs-table columns, sorts and queries over config keys (RunSummary.configValues) as over headline numbers, one
 * field reading for all three (runQuery.ts fieldValue), and the config values the store hands the table.
 */
import { describe, expect, it } from 'vitest';
import { summaryRun as run } from '../testing/runSummary';
import { configValues, MAX_CONFIG_STRING, MAX_CONFIG_VALUES } from '../../shared/configValues';
import { columnOf, columnSortKey, columnValue, configColumn, filterRuns, searchError, sortRuns, summaryColumnChoices } from './runsTable';
import { configKeys, fieldValue, matchesQuery, parseQuery, queryFields } from './runQuery';

const cfg = (lr: number, loss: string, extra: Record<string, unknown> = {}) =>
  configValues({
    algorithm: { policyLoss: { mode: loss, clipRatioLow: 0.2, clipRatioHigh: 0.28 } },
    optim: { lr },
    rollout: { groupSize: 8 },
    ...extra,
  });
const runs = [
  run({ id: 'a', preset: 'sampo', summary: { 'val/success_rate': 0.55 }, configValues: cfg(1e-3, 'sapo') }),
  run({ id: 'b', preset: 'grpo', summary: { 'val/success_rate': 0.3 }, configValues: cfg(3e-4, 'vanilla') }),
  run({ id: 'c', preset: 'sampo', summary: { 'val/success_rate': 0.7 }, configValues: cfg(3e-4, 'sapo', { env: { maxSteps: 20 } }) }),
  run({ id: 'verl', kind: 'imported', summary: { 'val/score_mean': 0.82 } }),
];
const ids = (q: string) => {
  const p = parseQuery(q);
  if ('error' in p) throw new Error(p.error);
  return runs.filter((r) => matchesQuery(r, p.clauses)).map((r) => r.id);
};

describe('config values for the table (shared/configValues.ts)', () => {
  it('flattens to dotted paths: numbers, text and booleans as they are, arrays as JSON, long text cut, at most MAX_CONFIG_VALUES', () => {
    expect(configValues({ a: { b: 1, c: 'x', d: true, e: null, f: [1, 2] }, g: 'y' })).toEqual({
      'a.b': 1,
      'a.c': 'x',
      'a.d': true,
      'a.e': null,
      'a.f': '[1,2]',
      g: 'y',
    });
    expect((configValues({ p: 'z'.repeat(1000) }).p as string).length).toBe(MAX_CONFIG_STRING);
    const wide = Object.fromEntries(Array.from({ length: MAX_CONFIG_VALUES + 50 }, (_, i) => [`k${i}`, i]));
    expect(Object.keys(configValues(wide))).toHaveLength(MAX_CONFIG_VALUES);
  });
});

describe('queries over config keys', () => {
  it('a config key by its path (or config.<path>) filters like a headline number', () => {
    expect(ids('optim.lr < 0.0005')).toEqual(['b', 'c']);
    expect(ids('algorithm.policyLoss.mode = sapo and val/success_rate > 0.6')).toEqual(['c']);
    expect(ids('config.optim.lr = 0.001')).toEqual(['a']);
    expect(ids('algorithm.policyLoss.mode != sapo')).toEqual(['b', 'verl']);
    expect(ids('env.maxSteps >= 20')).toEqual(['c']);
    // The lab's own paths (RunConfig: optim.lr, preset), as the guide's example writes them.
    expect(ids('optim.lr > 1e-4 and preset = sampo')).toEqual(['a', 'c']);
    // The headline-number example still reads.
    expect(ids('preset = sampo and val/success_rate > 0.4')).toEqual(['a', 'c']);
  });

  it('fieldValue is what a column shows, a sort orders by and a query compares', () => {
    expect(fieldValue(runs[0], 'optim.lr')).toBe(1e-3);
    expect(fieldValue(runs[0], 'val/success_rate')).toBe(0.55);
    expect(fieldValue(runs[3], 'optim.lr')).toBeNull();
    const col = columnOf(configColumn('optim.lr'), summaryColumnChoices(runs));
    expect(col).toMatchObject({ kind: 'config', label: 'optim.lr' });
    expect(runs.map((r) => columnValue(r, col))).toEqual([1e-3, 3e-4, 3e-4, null]);
    expect(sortRuns(runs, columnSortKey(col), 'asc').map((r) => r.id)).toEqual(['b', 'c', 'a', 'verl']);
    const loss = columnOf(configColumn('algorithm.policyLoss.mode'), summaryColumnChoices(runs));
    expect(sortRuns(runs, columnSortKey(loss), 'desc').map((r) => r.id)).toEqual(['b', 'a', 'c', 'verl']);
  });

  it('lists config keys as columns and query fields, the ones that tell the runs apart first', () => {
    expect(configKeys(runs)).toEqual([
      'algorithm.policyLoss.mode',
      'env.maxSteps',
      'optim.lr',
      'algorithm.policyLoss.clipRatioHigh',
      'algorithm.policyLoss.clipRatioLow',
      'rollout.groupSize',
    ]);
    const choices = summaryColumnChoices(runs);
    expect(choices.filter((c) => c.kind === 'config').map((c) => c.key)).toEqual(configKeys(runs).map(configColumn));
    expect(queryFields(runs)).toEqual(expect.arrayContaining(['val/score_mean', 'optim.lr', 'algorithm.policyLoss.mode']));
    // A column kept for a key no run has now stays a config column.
    expect(columnOf('config:gone.key', choices)).toMatchObject({ kind: 'config', label: 'gone.key' });
  });

  it('filterRuns reads the search as words or a query in one place; a query it cannot read filters nothing and says why', () => {
    expect(filterRuns(runs, { search: 'grpo' }).map((r) => r.id)).toEqual(['b']);
    expect(filterRuns(runs, { search: 'optim.lr > 0.0005' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRuns(runs, { search: 'optim.lr > fast' }).map((r) => r.id)).toEqual(['a', 'b', 'c', 'verl']);
    expect(searchError('optim.lr > fast')).toMatch(/compares numbers/);
    expect(searchError('sampo')).toBeNull();
  });
});
