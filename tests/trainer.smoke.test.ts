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
