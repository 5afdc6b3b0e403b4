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
  it('k = 1: step 1 is unchanged (θ_0 either way), later steps sample a stale policy and the engine gap grows', async () => {
    const now = recorder();
    await runTraining(tinyConfig('grpo', BASE), deps(), now.hooks);
    const lagged = recorder();
    await runTraining(tinyConfig('grpo', { ...BASE, 'rollout.policyLag': 1 }), deps(), lagged.hooks);
    const [a, b] = [deterministicPart(now.rec.metrics), deterministicPart(lagged.rec.metrics)];
    expect(b[0]).toEqual(a[0]);
    expect(b[1]).not.toEqual(a[1]);
    // Step 2 samples with θ_0 but π_old is θ_1: the gap is the update's size, far above float rounding (~1e-6).
    expect(lagged.rec.metrics[1].values['mismatch/logprob_abs_max']).toBeGreaterThan(1e-3);
    expect(now.rec.metrics[1].values['mismatch/logprob_abs_max']).toBeLessThan(1e-4);
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
