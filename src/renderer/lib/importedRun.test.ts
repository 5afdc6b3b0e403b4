import { describe, expect, it } from 'vitest';
import { IMPORTED_CHART_COUNT, baseName, importedChartKeys, notApplicableReason, seedLabel, sourceKeyRows } from './importedRun';

const DASH = ['episode/success_rate', 'actor/grad_norm', 'actor/entropy', 'actor/kl_loss'];

describe('importedChartKeys', () => {
  it('opens with the dashboard keys the source fed, then its other catalog keys, never a key it lacks', () => {
    const available = ['actor/entropy', 'actor/grad_norm', 'actor/ppo_kl', 'critic/vf_loss', 'episode/score_mean', 'timing/gen'];
    const catalog = new Set([
      'actor/entropy',
      'actor/grad_norm',
      'actor/ppo_kl',
      'episode/score_mean',
      'actor/kl_loss',
      'episode/success_rate',
    ]);
    expect(importedChartKeys(available, (k) => catalog.has(k), DASH)).toEqual([
      'actor/grad_norm',
      'actor/entropy',
      'actor/ppo_kl',
      'episode/score_mean',
    ]);
  });
  it("falls back to the source's own keys when little or nothing mapped, up to the cap", () => {
    const none = () => false;
    expect(importedChartKeys(['b/x', 'a/y'], none, DASH)).toEqual(['b/x', 'a/y']);
    const many = Array.from({ length: 30 }, (_, i) => `k${i}`);
    expect(importedChartKeys(many, none, DASH)).toHaveLength(IMPORTED_CHART_COUNT);
    expect(importedChartKeys(['actor/entropy', 'own/key'], (k) => k === 'actor/entropy', DASH)).toEqual(['actor/entropy', 'own/key']);
  });
});

describe('sourceKeyRows', () => {
  it('lists catalog ← source pairs first, then the unmapped keys kept under their own names', () => {
    const rows = sourceKeyRows({ 'actor/grad_norm': 'train/grad_norm', 'actor/entropy': 'train/entropy' }, [
      'actor/entropy',
      'actor/grad_norm',
      'train/reward_std',
      'train/epoch',
    ]);
    expect(rows).toEqual([
      { key: 'actor/entropy', source: 'train/entropy', mapped: true },
      { key: 'actor/grad_norm', source: 'train/grad_norm', mapped: true },
      { key: 'train/epoch', source: 'train/epoch', mapped: false },
      { key: 'train/reward_std', source: 'train/reward_std', mapped: false },
    ]);
  });
  it("lists a followed run's catalog keys as mapped, source not yet known, before its keyMap is written", () => {
    const rows = sourceKeyRows({}, ['own/key', 'actor/entropy'], (k) => k === 'actor/entropy');
    expect(rows).toEqual([
      { key: 'actor/entropy', source: null, mapped: true },
      { key: 'own/key', source: 'own/key', mapped: false },
    ]);
  });
});

describe('notApplicableReason', () => {
  const label = (k: string) => ({ 'actor/entropy': 'Entropy' })[k];
  it('names the one missing metric with its label', () => {
    expect(
      notApplicableReason({ rule: 'entropy_shift', title: 'Entropy', applicable: false, missing: ['actor/entropy'], needs: 'all' }, label),
    ).toBe('needs Entropy (actor/entropy), which the run did not log');
  });
  it('says "one of" when any of several keys would do', () => {
    expect(
      notApplicableReason({ rule: 'kl_drift', title: 'KL', applicable: false, missing: ['actor/ppo_kl', 'actor/kl_loss'], needs: 'any' }),
    ).toBe('needs one of actor/ppo_kl, actor/kl_loss — the run logged none');
  });
  it('says the rule is switched off when nothing is missing', () => {
    expect(notApplicableReason({ rule: 'x', title: 'X', applicable: false, missing: [], needs: 'all' })).toMatch(/switched off/);
  });
});

it('baseName takes the file name of POSIX and Windows paths', () => {
  expect(baseName('/data/runs/train.log')).toBe('train.log');
  expect(baseName('C:\\logs\\a.jsonl')).toBe('a.jsonl');
  expect(baseName('plain.csv')).toBe('plain.csv');
});

describe('seedLabel', () => {
  it('says "seed unknown" only for an imported run whose config names no seed', () => {
    expect(seedLabel({ kind: 'imported', seed: 0, config: {} })).toBe('seed unknown');
    expect(seedLabel({ kind: 'imported', seed: 0, config: { data: { seed: 0 } } })).toBe('seed 0');
    expect(seedLabel({ kind: 'imported', seed: 42, config: { data: { seed: 42 } } })).toBe('seed 42');
    expect(seedLabel({ kind: 'lab', seed: 0, config: {} })).toBe('seed 0');
    expect(seedLabel({ seed: 5, config: {} })).toBe('seed 5');
  });
});
