import { describe, expect, it } from 'vitest';
import { loadChartChoice, matches, namespaceOf, pickerGroups, queryRegex, saveChartChoice, toggled, toggledGroup } from './metricPicker';

const keys = [
  'episode/success_rate',
  'actor/grad_norm',
  'episode/reward_mean',
  'actor/entropy',
  'perf/tokens_per_s',
  'loss',
  'val/success_rate',
];
const labels: Record<string, string> = {
  'episode/success_rate': 'Success rate',
  'actor/grad_norm': 'Gradient norm',
  'actor/entropy': 'Entropy',
};
const label = (k: string) => labels[k] ?? k;

describe('metric picker', () => {
  it('groups keys by namespace in the order the namespaces first appear, counting charted keys', () => {
    expect(namespaceOf('actor/grad_norm')).toBe('actor');
    expect(namespaceOf('loss')).toBe('other');
    const groups = pickerGroups(keys, new Set(['actor/entropy', 'episode/success_rate']), label);
    expect(groups.map((g) => [g.ns, g.keys, g.charted, g.total])).toEqual([
      ['episode', ['episode/success_rate', 'episode/reward_mean'], 1, 2],
      ['actor', ['actor/grad_norm', 'actor/entropy'], 1, 2],
      ['perf', ['perf/tokens_per_s'], 0, 1],
      ['other', ['loss'], 0, 1],
      ['val', ['val/success_rate'], 0, 1],
    ]);
  });

  it('searches keys and labels (every word, any case) and leaves out groups with no match', () => {
    expect(matches('actor/grad_norm', 'Gradient norm', 'GRADIENT')).toBe(true);
    expect(matches('actor/grad_norm', 'Gradient norm', 'actor norm')).toBe(true);
    expect(matches('actor/grad_norm', 'Gradient norm', 'actor entropy')).toBe(false);
    const groups = pickerGroups(keys, new Set(['actor/entropy']), label, 'success');
    expect(groups.map((g) => [g.ns, g.keys])).toEqual([
      ['episode', ['episode/success_rate']],
      ['val', ['val/success_rate']],
    ]);
    // The group's count is of all its keys, not only the matching ones.
    expect(pickerGroups(keys, new Set(['actor/entropy']), label, 'grad')[0]).toMatchObject({
      ns: 'actor',
      keys: ['actor/grad_norm'],
      charted: 1,
      total: 2,
    });
  });

  it('adds a charted key last and a whole group after the charts already there', () => {
    expect(toggled(['a/x', 'b/y'], 'c/z', true)).toEqual(['a/x', 'b/y', 'c/z']);
    expect(toggled(['a/x', 'b/y'], 'a/x', false)).toEqual(['b/y']);
    expect(toggledGroup(['b/y', 'a/x'], ['a/w', 'a/x'], true)).toEqual(['b/y', 'a/x', 'a/w']);
    expect(toggledGroup(['b/y', 'a/x', 'a/w'], ['a/w', 'a/x'], false)).toEqual(['b/y']);
  });

  it('remembers the choice per view and ignores what it did not write', () => {
    const mem = new Map<string, string>();
    const store = { getItem: (k: string) => mem.get(k) ?? null, setItem: (k: string, v: string) => void mem.set(k, v) };
    expect(loadChartChoice('run', store)).toBeNull();
    saveChartChoice('run', ['actor/entropy', 'episode/success_rate'], store);
    saveChartChoice('compare', ['perf/tokens_per_s'], store);
    expect(loadChartChoice('run', store)).toEqual(['actor/entropy', 'episode/success_rate']);
    expect(loadChartChoice('compare', store)).toEqual(['perf/tokens_per_s']);
    mem.set('arlarena.charts.run', '{"not":"a list"}');
    expect(loadChartChoice('run', store)).toBeNull();
    mem.set('arlarena.charts.run', 'not json');
    expect(loadChartChoice('run', store)).toBeNull();
    const throwing = {
      getItem: () => {
        throw new Error('blocked');
      },
      setItem: () => {
        throw new Error('full');
      },
    };
    expect(loadChartChoice('run', throwing)).toBeNull();
    expect(() => saveChartChoice('run', ['a'], throwing)).not.toThrow();
  });
});

describe('metric search as W&B and TensorBoard read it', () => {
  const logged = ['critic/vf_explained_var', 'critic/vf_loss', 'timing_s/gen', 'timing_s/update_actor', 'perf/mfu/actor', 'actor/lr(1e-4)'];
  it('finds a source key by a substring of it', () => {
    expect(pickerGroups(logged, new Set(), (k) => k, 'explained').map((g) => [g.ns, g.keys])).toEqual([
      ['critic', ['critic/vf_explained_var']],
    ]);
    // Regex metacharacters in a key are searched for as they are.
    expect(pickerGroups(logged, new Set(), (k) => k, 'lr(1e-4)').flatMap((g) => g.keys)).toEqual(['actor/lr(1e-4)']);
  });
  it('reads the query as a regular expression (with or without slashes), case-insensitive', () => {
    expect(pickerGroups(logged, new Set(), (k) => k, '^timing_s/.*act').flatMap((g) => g.keys)).toEqual(['timing_s/update_actor']);
    expect(pickerGroups(logged, new Set(), (k) => k, '/VF_(LOSS|EXPLAINED)/').flatMap((g) => g.keys)).toEqual([
      'critic/vf_explained_var',
      'critic/vf_loss',
    ]);
    expect(pickerGroups(logged, new Set(), (k) => k, 'mfu|gen$').map((g) => g.ns)).toEqual(['timing_s', 'perf']);
    // A query that is no regular expression is still searched for as words.
    expect(queryRegex('vf_(')).toBeNull();
    expect(pickerGroups(logged, new Set(), (k) => k, 'vf_(').flatMap((g) => g.keys)).toEqual([]);
  });
});
