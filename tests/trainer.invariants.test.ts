/**
 * Cross-module invariants of the trainer: determinism, resume equivalence, the on-policy shortcut
 * (one mini-batch × one epoch ⇒ importance ratio exactly 1), and stop control. Wall-clock metrics (perf/* except
 * perf/total_tokens) are excluded from comparisons; with the fake clock they happen to match too, but on a real
 * clock they do not, so the comparison never relies on them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { deps, deterministicPart, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

describe('trainer invariants', () => {
  it('same config + seed + backend → identical metric stream and final weights', async () => {
    const cfg = tinyConfig('sampo', { 'training.steps': 2, 'algorithm.filter.coldStartSteps': 1 });
    const a = recorder();
    const b = recorder();
    const ra = await runTraining(cfg, deps(), a.hooks);
    const rb = await runTraining(cfg, deps(), b.hooks);
    expect(deterministicPart(b.rec.metrics)).toEqual(deterministicPart(a.rec.metrics));
    expect(rb.checkpoint.files['policy.bin']).toEqual(ra.checkpoint.files['policy.bin']);
    // A different seed gives a different stream (the comparison above can fail).
    const c = recorder();
    await runTraining(tinyConfig('sampo', { 'training.steps': 1, 'algorithm.filter.coldStartSteps': 1, seed: 2 }), deps(), c.hooks);
    const noVal = (r: { values: Record<string, number | string> }) => Object.entries(r.values).filter(([k]) => !k.startsWith('val/'));
    expect(noVal(deterministicPart(c.rec.metrics)[0])).not.toEqual(noVal(deterministicPart(a.rec.metrics)[0]));
  });

  it('resume from a checkpoint reproduces the uninterrupted run', async () => {
    const cfg = tinyConfig('grpo', { 'training.steps': 3, 'training.checkpointEvery': 1, 'training.validateEvery': 2 });
    const full = recorder();
    await runTraining(cfg, deps(), full.hooks);
    const ck1 = full.rec.checkpoints.find((c) => c.step === 1);
    expect(ck1).toBeDefined();
    const resumed = recorder();
    const res = await runTraining(cfg, deps(), resumed.hooks, ck1);
    expect(res.step).toBe(3);
    expect(deterministicPart(resumed.rec.metrics)).toEqual(deterministicPart(full.rec.metrics.filter((m) => m.step > 1)));
    expect(res.checkpoint.files['policy.bin']).toEqual(full.rec.checkpoints.at(-1)!.files['policy.bin']);
    expect(res.checkpoint.files['optim.bin']).toEqual(full.rec.checkpoints.at(-1)!.files['optim.bin']);
  });

  it('refuses to resume a checkpoint of a different config', async () => {
    const cfg = tinyConfig('grpo');
    const r = recorder();
    const res = await runTraining(cfg, deps(), r.hooks);
    await expect(runTraining(tinyConfig('grpo', { 'optim.lr': 1e-3 }), deps(), recorder().hooks, res.checkpoint)).rejects.toThrow(
      /different config/,
    );
  });

  it('one mini-batch × one epoch → importance ratio exactly 1 (ppo_kl 0, nothing clipped)', async () => {
    for (const preset of ['grpo', 'gspo', 'cispo']) {
      const r = recorder();
      await runTraining(tinyConfig(preset, { 'optim.miniBatchRows': 8, 'optim.epochs': 1 }), deps(), r.hooks);
      const v = r.rec.metrics[0].values;
      expect(v['actor/off_policy_step']).toBe(0);
      expect(v['actor/ppo_kl']).toBe(0);
      expect(v['actor/pg_clipfrac']).toBe(0);
    }
    // Several sequential mini-batches: later ones are off-policy.
    const r = recorder();
    await runTraining(tinyConfig('grpo', { 'optim.miniBatchRows': 2 }), deps(), r.hooks);
    expect(r.rec.metrics[0].values['actor/off_policy_step']).toBeGreaterThan(0);
  });

  it("'stop' from the control hook ends the run after the current step with a checkpoint", async () => {
    const { hooks, rec } = recorder((step) => (step >= 1 ? 'stop' : 'continue'));
    const res = await runTraining(tinyConfig('grpo', { 'training.steps': 5 }), deps(), hooks);
    expect(res.status).toBe('stopped');
    expect(res.step).toBe(1);
    expect(rec.checkpoints.at(-1)?.step).toBe(1);
  });
});
