/**
 * compute.rolloutPrecision in a real training run: the tiny config, onnxruntime rollouts at fp32, fp16 and int8,
 * same seed, two RL steps. The trainer is float32 in all three, so the gap it measures between its π_old and the
 * engine's log-probs (mismatch/*, rollout_corr/*) is the engine's precision: fp32's is float rounding (~1e-7),
 * int8's is quantisation error, orders of magnitude larger. An integration test: it trains (warm start + 2 steps ×3).
 * Measured when written (the tiny model is barely trained, so its logits are flat and the gaps small): mean/max
 * |Δ log-prob| fp32 2.3e-7/7.3e-7, fp16 2.9e-5/1.3e-4, int8 4.3e-4/1.7e-3; rollout_corr/k3_kl 4e-14, 7e-10, 1.5e-7.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import type { TrainerDeps } from '../src/core/training/types';
import { setupCompute } from '../src/main/compute/index';
import { deps, recorder, tinyConfig, useWasm, TEST_BACKEND } from './tinyTrainer';

beforeAll(useWasm);

async function run(precision: 'fp32' | 'fp16' | 'int8') {
  const c = await setupCompute({ backend: TEST_BACKEND, rolloutEngine: 'onnxruntime', rolloutPrecision: precision });
  const base = deps();
  const d: TrainerDeps = { ...base, compute: { ...base.compute, info: c.info, createRolloutEngine: c.createRolloutEngine } };
  const { hooks, rec } = recorder();
  const config = tinyConfig('grpo', {
    'compute.rolloutEngine': 'onnxruntime',
    'compute.rolloutPrecision': precision,
    'compute.reuseFirstMiniBatch': false,
    'training.steps': 2,
    seed: 3,
  });
  const res = await runTraining(config, d, hooks);
  expect(res.status).toBe('completed');
  expect(rec.metrics.length).toBe(2);
  const mean = (k: string) => rec.metrics.reduce((s, m) => s + m.values[k], 0) / rec.metrics.length;
  return {
    absMean: mean('mismatch/logprob_abs_mean'),
    absMax: mean('mismatch/logprob_abs_max'),
    k3: mean('rollout_corr/k3_kl'),
    logPplAbs: mean('rollout_corr/log_ppl_abs_diff'),
  };
}

describe('rollout precision in the trainer', () => {
  it('int8 rollouts log a larger mismatch than fp16, and fp16 than fp32, on the same seed', async () => {
    const fp32 = await run('fp32');
    const fp16 = await run('fp16');
    const int8 = await run('int8');
    expect(fp32.absMax).toBeLessThan(1e-4);
    expect(fp16.absMean).toBeGreaterThan(10 * fp32.absMean);
    expect(int8.absMean).toBeGreaterThan(3 * fp16.absMean);
    expect(int8.absMax).toBeGreaterThan(fp32.absMax);
    expect(int8.absMax).toBeLessThan(1);
    expect(int8.k3).toBeGreaterThan(fp32.k3);
    expect(int8.logPplAbs).toBeGreaterThan(fp32.logPplAbs);
  });
});
