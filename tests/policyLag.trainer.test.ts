/**
 * rollout.policyLag (the pressure ladder's third knob): training rollouts come from the policy of k steps ago
 * while π_old and validation use the current one; the lag queue is checkpointed, so resume reproduces the run.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { deps, deterministicPart, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

const BASE = { 'training.steps': 3, 'training.checkpointEvery': 1, 'optim.lr': 0.01 };

describe('policy lag', () => {
  it('k = 1: step 1 is unchanged (θ_0 either way), later steps sample a stale policy and the lag gap grows', async () => {
    const now = recorder();
    await runTraining(tinyConfig('grpo', BASE), deps(), now.hooks);
    const lagged = recorder();
    await runTraining(tinyConfig('grpo', { ...BASE, 'rollout.policyLag': 1 }), deps(), lagged.hooks);
    const [a, b] = [deterministicPart(now.rec.metrics), deterministicPart(lagged.rec.metrics)];
    // Step 1: the same numbers, the behaviour/π_old gap under the lag's keys instead of mismatch/*.
    const renamed = (v: Record<string, number | string>) => ({
      ...v,
      'mismatch/logprob_abs_max': v['offpolicy/lag_logprob_abs_max'],
      'mismatch/logprob_abs_mean': v['offpolicy/lag_logprob_abs_mean'],
      'offpolicy/lag_logprob_abs_max': 'NaN',
      'offpolicy/lag_logprob_abs_mean': 'NaN',
    });
    expect(renamed(b[0].values)).toEqual(a[0].values);
    expect(b[1]).not.toEqual(a[1]);
    // Step 2 samples with θ_0 but π_old is θ_1: the gap is the update's size, far above float rounding (~1e-6).
    expect(lagged.rec.metrics[1].values['offpolicy/lag_logprob_abs_max']).toBeGreaterThan(1e-3);
    expect(now.rec.metrics[1].values['mismatch/logprob_abs_max']).toBeLessThan(1e-4);
  });

  it('k = 1 logs the behaviour/π_old gap as staleness (offpolicy/lag_*), not as the engine mismatch (mismatch/*)', async () => {
    const lagged = recorder();
    await runTraining(tinyConfig('grpo', { ...BASE, 'rollout.policyLag': 1 }), deps(), lagged.hooks);
    for (const { values: v } of lagged.rec.metrics) {
      expect(Number.isFinite(v['offpolicy/lag_logprob_abs_max'])).toBe(true);
      expect(Number.isFinite(v['offpolicy/lag_logprob_abs_mean'])).toBe(true);
      expect(v['offpolicy/lag_logprob_abs_mean']).toBeLessThanOrEqual(v['offpolicy/lag_logprob_abs_max']);
      // Never measured under lag: every catalog key is in the record, NaN where it does not apply.
      expect(v['mismatch/logprob_abs_max']).toBeNaN();
      expect(v['mismatch/logprob_abs_mean']).toBeNaN();
    }
    // verl's off-policy diagnostics stay: they are about the behaviour policy, staleness included.
    expect(Number.isFinite(lagged.rec.metrics[1].values['rollout_corr/kl'])).toBe(true);
    // Level 0 (no lag): the engine mismatch as before, the lag keys NaN.
    const now = recorder();
    await runTraining(tinyConfig('grpo', BASE), deps(), now.hooks);
    for (const { values: v } of now.rec.metrics) {
      expect(Number.isFinite(v['mismatch/logprob_abs_max'])).toBe(true);
      expect(Number.isFinite(v['mismatch/logprob_abs_mean'])).toBe(true);
      expect(v['offpolicy/lag_logprob_abs_max']).toBeNaN();
      expect(v['offpolicy/lag_logprob_abs_mean']).toBeNaN();
    }
  });

  it('resume from a step-1 checkpoint reproduces the lagged run (the queue travels in the checkpoint)', async () => {
    const cfg = tinyConfig('grpo', { ...BASE, 'rollout.policyLag': 2 });
    const full = recorder();
    await runTraining(cfg, deps(), full.hooks);
    const ck1 = full.rec.checkpoints.find((c) => c.step === 1)!;
    expect(Object.keys(ck1.files)).toContain('lag-0.bin');
    const resumed = recorder();
    await runTraining(cfg, deps(), resumed.hooks, ck1);
    expect(deterministicPart(resumed.rec.metrics)).toEqual(deterministicPart(full.rec.metrics.filter((m) => m.step > 1)));
  });
});
