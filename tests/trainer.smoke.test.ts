import { beforeAll, describe, expect, it } from 'vitest';
import { PRESET_NAMES } from '../src/core/config/index';
import { METRIC_CATALOG } from '../src/shared/metrics';
import { runTraining } from '../src/core/training/trainer';
import { deps, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

describe('trainer smoke: every preset runs a tiny config end to end', () => {
  it.each(PRESET_NAMES.map((p) => [p]))('%s', async (preset) => {
    // Filtering presets: no cold start, so the over-sampling rounds run in the single step.
    const cfg = tinyConfig(preset, { 'algorithm.filter.coldStartSteps': 0 });
    const { hooks, rec } = recorder();
    const res = await runTraining(cfg, deps(), hooks);
    expect(res.status).toBe('completed');
    expect(rec.metrics).toHaveLength(1);
    const v = rec.metrics[0].values;
    // Every catalog key is present every step (NaN allowed only where it does not apply).
    for (const d of METRIC_CATALOG) expect(Object.keys(v)).toContain(d.key);
    expect(v['batch/rows']).toBeGreaterThan(0);
    expect(Number.isFinite(v['actor/grad_norm'])).toBe(true);
    expect(Number.isFinite(v['actor/pg_loss'])).toBe(true);
    expect(v['filter/rounds']).toBeGreaterThanOrEqual(1);
    expect(Number.isFinite(v['val/success_rate'])).toBe(true); // validation runs at the last step
    expect(rec.checkpoints.at(-1)?.step).toBe(1);
    expect(rec.trajectories.some((t) => t.split === 'train')).toBe(true);
  });
});

describe('validation before training (verl val_before_train)', () => {
  it('a fresh run with periodic validation logs the starting policy at step 0; off, or with validateEvery 0, it does not', async () => {
    const on = recorder();
    await runTraining(
      tinyConfig('grpo', { 'training.steps': 2, 'training.validateEvery': 2, 'training.valEpisodes': 3 }),
      deps(),
      on.hooks,
    );
    expect(on.rec.metrics.map((m) => m.step)).toEqual([0, 1, 2]);
    const v0 = on.rec.metrics[0].values;
    expect(v0['val/episodes']).toBe(3);
    expect(Number.isFinite(v0['val/success_rate'])).toBe(true);
    expect(Number.isNaN(v0['actor/grad_norm'])).toBe(true); // nothing was trained at step 0
    expect(on.rec.metrics[2].values['val/episodes']).toBe(3);
    expect(on.rec.statuses.some((s) => s.phase === 'validation' && s.step === 0)).toBe(true);

    const off = recorder();
    await runTraining(
      tinyConfig('grpo', {
        'training.steps': 2,
        'training.validateEvery': 2,
        'training.valEpisodes': 3,
        'training.validateBeforeTraining': false,
      }),
      deps(),
      off.hooks,
    );
    expect(off.rec.metrics.map((m) => m.step)).toEqual([1, 2]);
    const none = recorder();
    await runTraining(tinyConfig('grpo', { 'training.steps': 1, 'training.valEpisodes': 3 }), deps(), none.hooks);
    expect(none.rec.metrics.map((m) => m.step)).toEqual([1]);
  });
});
