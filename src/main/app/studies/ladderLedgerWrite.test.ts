/**
 * A ladder whose ledger cannot be written while a level trains (the report folder taken away, a full disk): the
 * failed write is the ladder's error once the level's runs have finished, not an unhandled rejection that ends the
 * process — and with it every run still training beside — at the moment it fails.
 *
 * The level's training is a stand-in runStudy (mocked: it finishes one run that is in the store, tells the ladder,
 * then goes on training for a while), since what is tested is how runLadder handles the write its onEntry starts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RunConfig } from '../../../core/config/index';
import { RunStore } from '../../store/index';
import { testLadderPlan } from '../../testing/ladderPlan';
import type { StudyRunOptions } from './runStudy';

let dir: string;
let report: string;
let runId: string;

vi.mock('./runStudy', () => ({
  runStudy: async (o: StudyRunOptions): Promise<boolean> => {
    // The report folder goes away while the level trains: the ledger's next write fails.
    await rm(report, { recursive: true, force: true });
    await writeFile(report, 'not a folder');
    const e = o.state.entries[0];
    Object.assign(e, {
      runId,
      status: 'completed',
      wallSeconds: 5,
      outcome: {
        env: e.env,
        preset: e.preset,
        seed: e.seed,
        steps: 2,
        heldOutGreedy: 0.5,
        heldOutSampled: 0.5,
        finalTrainSuccess: 0.5,
        bestTrainSuccess: 0.5,
        firstCriticalStep: null,
        stepsToThreshold: null,
      },
    });
    o.onEntry?.(e);
    // Other runs of the level still train.
    await new Promise((r) => setTimeout(r, 200));
    return true;
  },
}));

const { runLadder } = await import('./ladder');

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-ladder-write-'));
  report = join(dir, 'report');
  const store = await RunStore.open(join(dir, 'data'));
  try {
    const rec = await store.createRun({
      preset: 'grpo',
      env: 'sokoban',
      seed: 1,
      config: { preset: 'grpo' },
      totalSteps: 2,
      appVersion: '0.1.0',
      appCommit: 'c0ffee',
    });
    await store.appendMetrics(rec.id, [
      { step: 0, values: { 'val/success_rate': 0.5 } },
      { step: 1, values: { 'perf/rollout_s': 1 } },
      { step: 2, values: { 'perf/rollout_s': 1 } },
    ]);
    await store.updateRun(rec.id, { status: 'completed', step: 2 });
    runId = rec.id;
  } finally {
    await store.close();
  }
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});

afterEach(async () => {
  process.off('unhandledRejection', onUnhandled);
  await rm(dir, { recursive: true, force: true });
});

describe('runLadder with a stand-in runStudy (mock)', () => {
  it('a ledger write that fails mid-level is the ladder error after the level, never an unhandled rejection', async () => {
    const ladder = runLadder({
      dataDir: join(dir, 'data'),
      name: 'lw',
      plan: testLadderPlan({
        command: 'arlarena ladder --levels 1 --presets grpo --seeds 2 --study lw',
        levels: [1],
        presets: ['grpo'],
        seeds: [1, 2],
        steps: 2,
        episodes: 2,
      }),
      resume: false,
      parallel: 2,
      configOf: () => ({ preset: 'grpo' }) as unknown as RunConfig,
      log: () => undefined,
      reportDir: report,
      ledger: null,
    });
    await expect(ladder).rejects.toThrow(
      /^ladder "lw": could not write its ledger in .*report \(EEXIST.*\); the finished runs are kept in .*--resume.*--export-ledger/,
    );
    expect(unhandled).toEqual([]);
  });
});
