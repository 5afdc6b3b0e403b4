/**
 * Stop inside a step: when `hooks.interrupted` answers true in the middle of a step — during its
 * rollout, log-probs, update or validation — the trainer abandons that step: nothing of it is logged, the run ends
 * 'stopped' at the last completed step with the checkpoint an uninterrupted run wrote there (weights, optimizer,
 * RNG and task cursor put back), and resuming from it gives the uninterrupted run's later steps.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { readCheckpoint } from '../src/core/training/checkpoint';
import type { StepPart, TrainerCheckpoint } from '../src/core/training/types';
import { deps, deterministicPart, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

/** Checkpoint content that must not depend on when it was taken (the wall-clock total is left out). */
function comparable(ck: TrainerCheckpoint) {
  const { state } = readCheckpoint(ck);
  const { totals, ...rest } = state;
  return {
    step: ck.step,
    state: { ...rest, tokens: totals.tokens },
    policy: ck.files['policy.bin'],
    optim: ck.files['optim.bin'],
    ref: ck.files['ref.bin'],
  };
}

describe('trainer: stop inside a step', () => {
  // Validation at step 2 (the last), so every part of step 2 can be interrupted; a checkpoint at every step to compare with.
  const cfg = tinyConfig('grpo', { 'training.steps': 2, 'training.checkpointEvery': 1, 'training.validateEvery': 2 });
  let full: ReturnType<typeof recorder>['rec'];

  beforeAll(async () => {
    const r = recorder();
    await runTraining(cfg, deps(), r.hooks);
    full = r.rec;
  });

  it.each<StepPart>(['rollout', 'logprobs', 'update', 'validation'])(
    'during the %s: the step is dropped, the run ends at the last completed step, resume continues as if uninterrupted',
    async (part) => {
      const { hooks, rec } = recorder();
      const asked: string[] = [];
      let completed = 0;
      const onMetrics = hooks.onMetrics;
      hooks.onMetrics = (m) => {
        completed = m.step;
        onMetrics(m);
      };
      // Asked during step 2 only: true at the first point of `part`; in the update at the second mini-batch, once
      // the first has changed the weights (so they must be put back).
      const nth = part === 'update' ? 2 : 1;
      hooks.interrupted = async (where) => {
        if (completed === 1) asked.push(where);
        return completed === 1 && where === part && asked.filter((a) => a === part).length === nth;
      };
      const res = await runTraining(cfg, deps(), hooks);

      expect(res.status).toBe('stopped');
      expect(res.step).toBe(1);
      // Step 2 got as far as `part` (the parts before it ran), and nothing of it was logged.
      expect(asked.at(-1)).toBe(part);
      expect(asked.filter((a) => a === part)).toHaveLength(nth);
      // (Step 0 is the starting policy's own validation.)
      expect(rec.metrics.map((m) => m.step)).toEqual([0, 1]);
      expect(deterministicPart(rec.metrics)).toEqual(deterministicPart(full.metrics.filter((m) => m.step <= 1)));
      expect(rec.trajectories.every((t) => t.step <= 1)).toBe(true);
      // The stop checkpoint is step 1's, as the uninterrupted run wrote it.
      const last = rec.checkpoints.at(-1)!;
      expect(last.step).toBe(1);
      expect(comparable(last)).toEqual(comparable(full.checkpoints.find((c) => c.step === 1)!));
      expect(rec.statuses.some((s) => s.message?.includes(`stopped during the ${part} of step 2`))).toBe(true);
      expect(rec.statuses.at(-1)).toMatchObject({ phase: 'done', step: 1, message: 'stopped' });

      const resumed = recorder();
      const again = await runTraining(cfg, deps(), resumed.hooks, last);
      expect(again.status).toBe('completed');
      expect(deterministicPart(resumed.rec.metrics)).toEqual(deterministicPart(full.metrics.filter((m) => m.step > 1)));
      expect(again.checkpoint.files['policy.bin']).toEqual(full.checkpoints.at(-1)!.files['policy.bin']);
    },
  );

  it('a stop before the first step ends at step 0 without logging anything', async () => {
    const { hooks, rec } = recorder();
    hooks.interrupted = async () => true;
    const res = await runTraining(tinyConfig('grpo', { 'training.steps': 2 }), deps(), hooks);
    expect(res).toMatchObject({ status: 'stopped', step: 0 });
    expect(rec.metrics).toEqual([]);
    expect(rec.checkpoints.map((c) => c.step)).toEqual([0]);
  });
});
