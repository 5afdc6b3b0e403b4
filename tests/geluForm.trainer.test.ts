/**
 * model.geluForm: new configs compute GELU as x·σ(2u), which is faster on tfjs-wasm; a config stored
 * before the field (no model.geluForm) keeps the tanh arithmetic it ran with, so an older run, bundle or warm-start
 * recipe reproduces bit for bit, and the two forms train the same function up to float rounding.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { modelSpecOf } from '../src/core/training/warmstart';
import type { RunConfig } from '../src/core/config/types';
import { deps, deterministicPart, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

/** The config as a build from before model.geluForm stored it. */
function storedBefore(cfg: RunConfig): RunConfig {
  const { geluForm: _g, ...model } = cfg.model;
  return { ...cfg, model };
}

describe('model.geluForm', () => {
  it('defaults to sigmoid for new configs; a config without the field trains with tanh, bit for bit', async () => {
    const fresh = tinyConfig('grpo', { 'training.steps': 2, 'compute.workers': 1 });
    expect(fresh.model.geluForm).toBe('sigmoid');
    expect(modelSpecOf(storedBefore(fresh)).geluForm).toBe('tanh');

    const run = async (cfg: RunConfig) => {
      const r = recorder();
      const res = await runTraining(cfg, deps(), r.hooks);
      return { metrics: deterministicPart(r.rec.metrics), policy: res.checkpoint.files['policy.bin'] };
    };
    const old = await run(storedBefore(fresh));
    const tanh = await run(tinyConfig('grpo', { 'training.steps': 2, 'compute.workers': 1, 'model.geluForm': 'tanh' }));
    const sigmoid = await run(fresh);
    expect(tanh.metrics).toEqual(old.metrics);
    expect(tanh.policy).toEqual(old.policy);
    // The faster form is another float rounding of the same function: the weights differ in their last bits.
    expect(sigmoid.policy).not.toEqual(tanh.policy);
  }, 120_000);
});
