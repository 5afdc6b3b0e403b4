import { describe, expect, it } from 'vitest';
import { loadSavedWorkspace, parseWorkspace, saveWorkspace, workspaceQuery, workspaceStorageKey, xKeyCandidates } from './compareWorkspace';
import { parseRoute } from './router';

describe('Compare workspace in the address', () => {
  it('round-trips charts (any logged key), smoothing, x-axis and hidden legend entries', () => {
    const ws = {
      metrics: ['val/score_mean', 'val-core/openai/gsm8k/reward/mean@1', 'actor/lr(1e-4)'],
      smoothing: 'ema' as const,
      strength: 0.8,
      xAxis: 'tokens' as const,
      hidden: ['run-b'],
    };
    const q = `?view=compare&runs=run-a,run-b&group=preset${workspaceQuery(ws)}`;
    expect(parseWorkspace(q)).toEqual(ws);
    // The route still reads its own part.
    expect(parseRoute(q)).toEqual({ view: 'compare', ids: ['run-a', 'run-b'], group: 'preset' });
  });

  it('leaves defaults out of the address and ignores what it cannot read', () => {
    expect(workspaceQuery({ smoothing: 'none', xAxis: 'step', hidden: [] })).toBe('');
    expect(parseWorkspace('?view=compare&smooth=bogus:7&x=epochs&metrics=')).toEqual({ metrics: [] });
    expect(parseWorkspace('?view=compare')).toEqual({});
  });
});

describe('x-axis by a logged key', () => {
  it('keeps the key in the address and offers the training counters a log carries', () => {
    expect(parseWorkspace(`?view=compare${workspaceQuery({ xKey: 'training/epoch' })}`)).toEqual({ xKey: 'training/epoch' });
    expect(
      xKeyCandidates([
        'training/epoch',
        'training/global_step',
        'perf/total_num_tokens',
        'timing_s/gen',
        'perf/tokens_per_s',
        'timing_per_token_ms/gen',
        'actor/entropy',
      ]),
    ).toEqual(['training/epoch', 'training/global_step']);
  });
});

describe('saved workspace per set of runs', () => {
  it('comes back for the same runs in any order, not for another set', () => {
    const mem = new Map<string, string>();
    const store = { getItem: (k: string) => mem.get(k) ?? null, setItem: (k: string, v: string) => void mem.set(k, v) };
    saveWorkspace(
      ['b', 'a'],
      { metrics: ['val/score_mean'], smoothing: 'ema', strength: 0.9, xKey: 'training/epoch', hidden: ['b'], group: 'preset' },
      store,
    );
    expect(workspaceStorageKey(['a', 'b'])).toBe(workspaceStorageKey(['b', 'a']));
    expect(loadSavedWorkspace(['a', 'b'], store)).toEqual({
      metrics: ['val/score_mean'],
      smoothing: 'ema',
      strength: 0.9,
      xKey: 'training/epoch',
      hidden: ['b'],
      group: 'preset',
    });
    expect(loadSavedWorkspace(['a', 'c'], store)).toBeNull();
    mem.set(workspaceStorageKey(['x']), 'not json');
    expect(loadSavedWorkspace(['x'], store)).toBeNull();
  });
});
