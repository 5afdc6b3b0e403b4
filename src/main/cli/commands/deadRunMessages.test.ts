/**
 * What the CLI says of runs a dead process left running (hardening round three, unclear errors): an imported or
 * followed run was told "was being trained … continue it: arlarena resume", which resume then refused, and a run
 * killed before its first checkpoint was promised one. Each now gets the sentence that is true of it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RunStore } from '../../store/runStore';
import { testCliContext } from '../../testing/testContext';
import { syntheticJobs } from '../../testing/jobs/index';
import resume from './resume';
import runs from './runs';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-dead-runs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-e', '']);
    c.on('exit', () => resolve(c.pid!));
  });
}

it('an imported run and a run without a checkpoint are told what is true of them', async () => {
  const store = await RunStore.open(dir);
  const pid = await deadPid();
  const owner = JSON.stringify({ pid, since: new Date().toISOString() });
  const followed = await store.createRun({
    kind: 'imported',
    preset: 'imported',
    env: 'external',
    seed: 0,
    totalSteps: 0,
    config: {},
    status: 'running',
    source: {
      format: 'verl-console',
      framework: 'verl',
      paths: ['/x/train.log'],
      sha256: [],
      bytes: 0,
      importedAt: new Date().toISOString(),
      keyMap: {},
      skipped: {},
      following: true,
      notes: [],
    },
  });
  const fresh = await store.createRun({
    preset: 'test',
    env: 'sokoban',
    seed: 1,
    totalSteps: 6,
    config: { steps: 6, checkpointEvery: 2 },
    status: 'running',
  });
  for (const id of [followed.id, fresh.id]) await writeFile(join(store.runDir(id), '.owner'), owner);
  await store.close();
  const c = testCliContext(dir);
  expect(await runs.run([], c.ctx)).toBe(0);
  expect(c.err()).toContain(
    `run ${followed.id} was being followed by process ${pid}, which is gone; marked interrupted (it keeps the steps read until then; follow or import the log again for the rest)`,
  );
  expect(c.err()).toContain(
    `run ${fresh.id} was being trained by process ${pid}, which is gone before its first checkpoint; marked interrupted (nothing to resume from: arlarena resume ${fresh.id} trains it again from the start)`,
  );
  expect(c.err()).not.toContain(`continue it`);
  // resume says so too, and trains it from the start.
  const r = testCliContext(dir);
  expect(await resume.run([fresh.id], { ...r.ctx, jobs: syntheticJobs() })).toBe(0);
  expect(r.err()).toContain(`${fresh.id} has no checkpoint: there is nothing to resume from, so it trains again from the start`);
});
