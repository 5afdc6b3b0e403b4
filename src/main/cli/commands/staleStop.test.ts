/**
 * `arlarena stop RUN` leaves its request (runs/<id>/.stop-request) for the process training RUN, which takes it at
 * its next poll; if a session's end SIGKILLs that process first (a step that outlasted `stop --wait`, or the stop
 * and the trainer killed together), the request outlives both. The next session's resume of RUN — the user's, or a
 * study's or ladder's own — then met it at its first poll and stopped the run it had just resumed (the ladder's
 * entry "ended stopped", a resume that seemed to do nothing). A resume is asked after the stop: it wins.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RunStore } from '../../store/runStore';
import { syntheticJobs } from '../../testing/jobs/index';
import { testCliContext } from '../../testing/testContext';
import resume from './resume';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-stale-stop-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process killed with SIGKILL, and when it started (before the kill). */
async function killedProcess(): Promise<{ pid: number; since: string }> {
  const since = new Date().toISOString();
  const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  await new Promise((r) => c.once('spawn', r));
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGKILL');
  await exited;
  return { pid: c.pid!, since };
}

it('a stop request its killed trainer never took does not stop the run a later resume trains', async () => {
  const store = await RunStore.open(dir);
  const rec = await store.createRun({
    preset: 'test',
    env: 'sokoban',
    seed: 1,
    totalSteps: 6,
    // 6 steps of 150 ms: the session's first poll for stop requests (250 ms in) comes while it trains
    config: { steps: 6, stepMs: 150, checkpointEvery: 2 },
    status: 'running',
  });
  await writeFile(join(store.runDir(rec.id), '.owner'), JSON.stringify(await killedProcess()));
  await store.requestStop(rec.id);
  await store.close();

  const c = testCliContext(dir);
  expect(await resume.run([rec.id], { ...c.ctx, jobs: syntheticJobs() }), c.err()).toBe(0);
  const after = await RunStore.open(dir);
  try {
    const run = (await after.getRun(rec.id))!;
    expect(run.status, c.out()).toBe('completed');
    expect(run.step).toBe(6);
    expect(existsSync(join(after.runDir(rec.id), '.stop-request'))).toBe(false);
  } finally {
    await after.close();
  }
});

// The same resume of a run paused in a live process (the app paused it, its worker waits): that process owns the
// run, and a request 'arlarena stop' left for it is its to take. The resume trained the run here as well — two
// processes writing one run — and took the request, so the live one never stopped.
it('a run paused in another live process is refused, and the stop request left for that process stays', async () => {
  const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  await new Promise((r) => owner.once('spawn', r));
  try {
    const store = await RunStore.open(dir);
    const rec = await store.createRun({
      preset: 'test',
      env: 'sokoban',
      seed: 1,
      totalSteps: 6,
      config: { steps: 6, stepMs: 150, checkpointEvery: 2 },
      status: 'paused',
    });
    await store.claimRun(rec.id, owner.pid!);
    await store.requestStop(rec.id);
    await store.close();

    const c = testCliContext(dir);
    expect(await resume.run([rec.id], { ...c.ctx, jobs: syntheticJobs() }), c.out()).toBe(1);
    expect(c.err()).toContain(`paused in another process (pid ${owner.pid})`);
    const after = await RunStore.open(dir);
    try {
      expect((await after.getRun(rec.id))!.status).toBe('paused');
      expect(existsSync(join(after.runDir(rec.id), '.stop-request'))).toBe(true);
    } finally {
      await after.close();
    }
  } finally {
    owner.kill('SIGKILL');
  }
});

// A run another live process trains (or holds queued) is refused as the paused one is: naming that process's pid and
// how to go on (new-user walkthrough: resume of a run training in `serve` said only "is running in another process").
it('a run running or queued in another live process is refused naming its pid and arlarena stop', async () => {
  const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  await new Promise((r) => owner.once('spawn', r));
  try {
    for (const status of ['running', 'queued'] as const) {
      const store = await RunStore.open(dir);
      const rec = await store.createRun({ preset: 'test', env: 'sokoban', seed: 1, totalSteps: 6, config: { steps: 6 }, status });
      await store.claimRun(rec.id, owner.pid!);
      await store.close();
      const c = testCliContext(dir);
      expect(await resume.run([rec.id], { ...c.ctx, jobs: syntheticJobs() }), c.out()).toBe(1);
      expect(c.err()).toBe(
        `arlarena resume: run ${rec.id} is ${status} in another process (pid ${owner.pid}): stop it there, or with arlarena stop ${rec.id}, then resume it\n`,
      );
    }
  } finally {
    owner.kill('SIGKILL');
  }
});
