import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testCliContext as ctx } from '../../testing/testContext';
import { UsageError } from '../types';
import train from './train';

/** A run far too long for the budget below: scratch start without BC, tiny batches, 500 steps. */
const LONG = [
  'warmStart.source=scratch',
  'warmStart.bcUpdates=0',
  'rollout.tasksPerStep=1',
  'rollout.groupSize=2',
  'env.maxSteps=2',
  'rollout.maxResponseTokens=8',
  'optim.miniBatchRows=4',
  'training.validateEvery=0',
  'training.valEpisodes=1',
  'training.checkpointEvery=0',
].flatMap((s) => ['--set', s]);

describe('arlarena train --max-minutes', () => {
  it('rejects a budget that is not a positive number', async () => {
    await expect(train.run(['--max-minutes', '0'], ctx('/nonexistent').ctx)).rejects.toThrow(UsageError);
    await expect(train.run(['--max-minutes', 'soon'], ctx('/nonexistent').ctx)).rejects.toThrow(/--max-minutes must be a number > 0/);
  });

  it('stops a run at the wall-clock budget, keeps it, and exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arl-train-'));
    try {
      const c = ctx(dir);
      const code = await train.run(['--preset', 'grpo', '--steps', '500', '--max-minutes', '0.05', '--json', ...LONG], c.ctx);
      const out = JSON.parse(c.out());
      expect(code).toBe(0);
      expect(out).toMatchObject({ status: 'stopped', budgetHit: true, totalSteps: 500 });
      expect(out.step).toBeLessThan(500);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
