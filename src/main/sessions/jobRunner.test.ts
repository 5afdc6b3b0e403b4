/**
 * runJob, the worker side of a session: a resume that finds no checkpoint starts the run afresh and
 * must drop what the killed attempt wrote — its step-0 validation line and trajectories included;
 * a job that fails because the policy weights went non-finite raises a critical alert.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunFiles } from '../store/runFiles';
import { readJsonl } from '../store/jsonl';
import type { TrainingJob } from './job';
import type { WorkerToHost } from './protocol';
import { runJob } from './jobRunner';
import { NonFiniteWeightsError } from '../../core/training/finiteWeights';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-job-'));
  await RunFiles.ensureDir(dir);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const val = (step: number) => ({
  step,
  split: 'val' as const,
  env: 'sokoban',
  taskId: `v${step}`,
  uid: 'u',
  trajUid: `val-${step}`,
  won: false,
  episodeReturn: 0,
  turns: [],
});

/** Like the trainer with validateBeforeTraining: a step-0 validation line and trajectory, then RL steps. */
function job(opts: { failAfterStep0?: boolean; fail?: Error }): TrainingJob {
  return {
    async run(_input, hooks) {
      hooks.onMetrics({ step: 0, values: { 'val/success_rate': 0.25 } });
      hooks.onTrajectory(val(0));
      if (opts.failAfterStep0) throw new Error('killed before the first checkpoint');
      if (opts.fail) throw opts.fail;
      hooks.onMetrics({ step: 1, values: { 'actor/grad_norm': 0.5 } });
      await hooks.onCheckpoint({ step: 1, files: { 'a.bin': new Uint8Array([1]) }, meta: {} });
      return { status: 'completed', step: 1 };
    },
  };
}

const start = (resume: boolean) => ({
  type: 'start' as const,
  runId: 'r1',
  runDir: dir,
  dataDir: dir,
  config: {},
  seed: 1,
  resume,
  flushMs: 10_000,
});

describe('runJob', () => {
  it("a resume without any checkpoint does not keep the killed attempt's step-0 line or trajectories", async () => {
    const first = await runJob({ start: start(false), job: job({ failAfterStep0: true }), post: () => undefined });
    expect(first.type).toBe('failed');
    expect((await readJsonl(join(dir, 'metrics.jsonl'))).items).toHaveLength(1);
    const again = await runJob({ start: start(true), job: job({}), post: () => undefined });
    expect(again.type).toBe('done');
    const steps = (await readJsonl(join(dir, 'metrics.jsonl'))).items.map((r) => (r as { step: number }).step);
    expect(steps).toEqual([0, 1]);
    const trajs = (await readJsonl(join(dir, 'trajectories.jsonl'))).items.map((t) => (t as { trajUid: string }).trajUid);
    expect(trajs).toEqual(['val-0']);
  });

  it('non-finite policy weights end the run with a clear reason and a critical alert', async () => {
    const posted: WorkerToHost[] = [];
    const res = await runJob({
      start: start(false),
      job: job({ fail: new NonFiniteWeightsError(3, 'pos_embedding', 12, 100) }),
      post: (m) => posted.push(m),
    });
    expect(res.type).toBe('failed');
    expect(res.type === 'failed' && res.error).toMatch(/policy weights became non-finite at step 3.*pos_embedding/);
    const alerts = posted.filter((m) => m.type === 'alert');
    expect(alerts).toHaveLength(1);
    const a = alerts[0].type === 'alert' ? alerts[0].alert : null;
    expect(a?.severity).toBe('critical');
    expect(a?.rule).toBe('non_finite');
    expect(a?.firstStep).toBe(3);
  });
});
