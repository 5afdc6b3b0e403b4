/**
 * Stop-on-collapse through the study runner with the synthetic stand-in job (worker threads, a few seconds): each
 * run stops soon after the collapse step the whole stream has (known from the synthetic stream itself), is
 * recorded as stopped "collapsed at step S (…)", its outcome gives the ladder that same S, and a resumed study
 * neither trains it again nor changes its outcome.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunConfig } from '../../../core/config/index';
import { detectAlerts } from '../../../core/stability/detector';
import { syntheticStream } from '../../../core/stability/synthetic';
import { collapseStep, firstCriticalStep } from '../../../core/stats/index';
import type { MetricRecord } from '../../../shared/metrics';
import { RunStore } from '../../store/index';
import { syntheticJobs } from '../../testing/jobs/index';
import { runStudy } from './runStudy';
import type { StudyState } from './studyFiles';

const STEPS = 60;
const SHAPE = 'cispo_collapse';

/** The synthetic job's config (synthetic.ts), with the fields trainInStore reads from a run config. */
const synthConfig = (seed: number): RunConfig =>
  ({
    preset: 'cispo',
    env: { name: 'sokoban' },
    seed,
    training: { steps: STEPS },
    steps: STEPS,
    shape: SHAPE,
    stepMs: 40,
    checkpointEvery: 5,
  }) as unknown as RunConfig;

const vals = (ms: readonly MetricRecord[]) =>
  ms.map((m) => [m.step, m.values['val/success_rate']] as [number, number]).filter(([, v]) => Number.isFinite(v));

/** The ladder's collapse step of the run trained on to its last step (the synthetic job's whole stream). */
const ranOnCollapse = (seed: number) => {
  const full = syntheticStream({ steps: STEPS, seed, shape: SHAPE });
  return collapseStep(firstCriticalStep(detectAlerts('r', full)), vals(full), 0.5);
};

function plan(seeds: number[]): StudyState {
  return {
    version: 1,
    name: '',
    createdAt: '2026-12-05T00:00:00.000Z',
    plan: {
      command: 'test',
      envs: ['sokoban'],
      presets: ['cispo'],
      seeds,
      steps: null,
      model: null,
      sets: {},
      baseline: 'cispo',
      episodes: 1,
      threshold: 0.5,
      stopOnCollapse: { fraction: 0.5 },
    },
    entries: seeds.map((seed) => ({ env: 'sokoban', preset: 'cispo', seed, runId: null, status: null, wallSeconds: null, outcome: null })),
  };
}

describe('stop-on-collapse in the study runner (synthetic job)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arl-stop-collapse-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stops each run at the collapse step it would have had trained on, records why, and resumes without training it again', async () => {
    const state = plan([2, 5]);
    const lines: string[] = [];
    const opts = {
      dataDir: dir,
      state,
      persist: false,
      jobs: syntheticJobs(),
      configOf: (e: { seed: number }) => synthConfig(e.seed),
      log: (l: string) => lines.push(l),
    };
    expect(await runStudy(opts)).toBe(true);
    const store = await RunStore.open(dir);
    try {
      for (const e of state.entries) {
        const S = ranOnCollapse(e.seed);
        expect(S, `seed ${e.seed} collapses in the synthetic stream`).not.toBeNull();
        expect(e.status).toBe('stopped');
        expect(e.stopReason).toMatch(new RegExp(`^collapsed at step ${S} \\(critical alert `));
        const rec = (await store.getRun(e.runId!))!;
        expect(rec.status).toBe('stopped');
        expect(rec.error).toBe(e.stopReason);
        const metrics = await store.readMetrics(e.runId!);
        const last = Math.max(...metrics.map((m) => m.step));
        // it stopped after S (between updates) and before the end: the steps after it were saved
        expect(last).toBeGreaterThanOrEqual(S!);
        expect(last).toBeLessThan(STEPS);
        expect(e.outcome).toMatchObject({ seed: e.seed, steps: last, heldOutGreedy: null, heldOutSampled: null });
        // what the ladder reads from this run: the same collapse step as the run trained on
        expect(collapseStep(e.outcome!.firstCriticalStep, vals(metrics), 0.5)).toBe(S);
      }
    } finally {
      await store.close();
    }
    // A resumed study (the outcomes lost, the runs kept): the stopped runs are taken as they are.
    const before = state.entries.map((e) => ({ ...e.outcome! }));
    for (const e of state.entries) e.outcome = null;
    lines.length = 0;
    expect(await runStudy(opts)).toBe(true);
    expect(state.entries.map((e) => e.outcome)).toEqual(before);
    expect(lines.filter((l) => l.includes('was stopped at its collapse'))).toHaveLength(2);
    expect(lines.some((l) => l.includes('resuming'))).toBe(false);
  }, 60_000);
});
