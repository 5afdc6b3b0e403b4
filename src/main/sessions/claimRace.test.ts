/**
 * Two processes resuming one interrupted run at once: each checks that no live process owns it (resume's
 * ownedElsewhere), then claims it as it queues it (submit). The claim overwrote whatever owner file it found, so
 * when the other process claimed the run between this one's check and its claim, both trained it — two processes
 * writing one run. The claim now takes the data dir's lock and refuses a run another live process holds, naming its
 * pid. The other process is a real one here (its claim written with its pid and start), and submit is called as
 * resume calls it once its check has passed.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';
import { SessionManager } from './sessionManager';
import { syntheticJobs } from '../testing/jobs/index';

let dir: string;
let store: RunStore;
let mgr: SessionManager | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-claim-race-'));
  store = await RunStore.open(dir);
});
afterEach(async () => {
  await mgr?.dispose();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

it('a run another live process claimed after resume checked is refused at the claim, naming that pid; nothing trains here', async () => {
  const { spawn: spawnJob, validateConfig } = syntheticJobs();
  const launched: string[] = [];
  mgr = new SessionManager({
    store,
    validateConfig,
    spawn: (runId) => {
      launched.push(runId);
      return spawnJob(runId);
    },
    flushMs: 50,
    throttleMs: 250,
  });
  const rec = await store.createRun({
    preset: 'test',
    env: 'sokoban',
    seed: 1,
    config: { steps: 5, stepMs: 5 },
    totalSteps: 5,
    status: 'interrupted',
  });
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => other.once('spawn', r));
    await store.claimRun(rec.id, other.pid!); // the other process's claim, landed after this one's check
    await expect(mgr.submit(rec.id, true)).rejects.toThrow(new RegExp(`run ${rec.id} .*another process \\(pid ${other.pid}\\)`));
    expect(await store.ownerOf(rec.id)).toEqual({ pid: other.pid, alive: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(launched).toEqual([]);
    expect((await store.getRun(rec.id))!.status).toBe('interrupted');
  } finally {
    other.kill('SIGKILL');
  }
});

it('claimRunIfFree returns null only once the run is claimed here: a holder that releases between its reads does not leave the run unclaimed', async () => {
  const rec = await store.createRun({
    preset: 'test',
    env: 'sokoban',
    seed: 1,
    config: { steps: 5 },
    totalSteps: 5,
    status: 'interrupted',
  });
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => other.once('spawn', r));
    await store.claimRun(rec.id, other.pid!);
    // The other process ends its run (releaseRun: an rm outside the lock) just after this one judged it alive.
    const judge = store.ownedElsewhere.bind(store);
    store.ownedElsewhere = async (id: string) => {
      const r = await judge(id);
      await store.releaseRun(id);
      return r;
    };
    const holder = await store.claimRunIfFree(rec.id);
    const owner = await store.ownerOf(rec.id);
    // Either refused, naming the other pid, or claimed by this process: never "claimed" with no owner file.
    if (holder === null) expect(owner).toEqual({ pid: process.pid, alive: true });
    else expect(holder).toBe(other.pid);
  } finally {
    other.kill('SIGKILL');
  }
});
