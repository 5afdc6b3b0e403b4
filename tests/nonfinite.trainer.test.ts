/**
 * Non-finite updates and weights through the real trainer on the tiny config. optim.eps = 0 in float32 (what
 * 1e-300 rounds to; the validator now refuses it, so the test passes it in directly) used to write NaN into the
 * position embeddings; now those updates are skipped and counted and the weights stay finite. A checkpoint
 * whose policy holds NaN (as the old build saved them) stops the resumed run with the reason.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { decodeTensors, encodeTensors } from '../src/core/training/tensorio';
import { NonFiniteWeightsError } from '../src/core/training/finiteWeights';
import type { RunConfig } from '../src/core/config/index';
import { deps, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

describe('trainer: non-finite updates and weights', () => {
  it('eps that is 0 in float32 skips the non-finite updates; the saved weights stay finite', async () => {
    const cfg = tinyConfig('grpo');
    const zeroEps = { ...cfg, optim: { ...cfg.optim, eps: 0 } } as RunConfig;
    const { hooks, rec } = recorder();
    const res = await runTraining(zeroEps, deps(), hooks);
    expect(res.status).toBe('completed');
    expect(rec.metrics[0].values['actor/skipped_updates']).toBeGreaterThan(0);
    const policy = decodeTensors(rec.checkpoints.at(-1)!.files['policy.bin']);
    for (const [name, t] of Object.entries(policy)) expect(t.data.every(Number.isFinite), name).toBe(true);
  }, 120_000);

  it('resuming from a checkpoint whose weights hold NaN stops with NonFiniteWeightsError', async () => {
    const cfg = tinyConfig('grpo', { 'training.steps': 2 });
    const first = recorder((step) => (step >= 1 ? 'stop' : 'continue'));
    await runTraining(cfg, deps(), first.hooks);
    const ck = first.rec.checkpoints.at(-1)!;
    const policy = decodeTensors(ck.files['policy.bin']);
    const name = Object.keys(policy)[0];
    policy[name].data[0] = NaN;
    const broken = { ...ck, files: { ...ck.files, 'policy.bin': encodeTensors(policy) } };
    const again = recorder();
    await expect(runTraining(cfg, deps(), again.hooks, broken)).rejects.toThrow(NonFiniteWeightsError);
    expect(again.rec.checkpoints).toHaveLength(0);
  }, 120_000);
});
