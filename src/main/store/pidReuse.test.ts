/**
 * After a session's end SIGKILLs every process, the next session's processes are handed pids from low numbers
 * again, so the process that looks at a dead one's files may itself carry the dead one's pid. Here the dead
 * predecessor is simulated in this test process: an owner or lock file naming this process's own pid, written
 * before this process started (what a killed process of the previous session with the same pid left). Each was
 * taken for this process's own and alive: `arlarena resume` refused the run ("is running in another process"),
 * `arlarena runs` never marked it interrupted, and the catalog's lock was waited on until it turned stale.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RunStore } from './runStore';
import { LockTimeoutError, acquire, release } from './fileLock';
import { testCliContext } from '../testing/testContext';
import { syntheticJobs } from '../testing/jobs/index';
import resume from '../cli/commands/resume';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-pid-reuse-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Epoch ms a minute before this process started: when the dead predecessor with this pid wrote its files. */
const beforeThisProcess = (): number => Date.now() - process.uptime() * 1000 - 60_000;

async function runningRun(store: RunStore): Promise<string> {
  const rec = await store.createRun({
    preset: 'test',
    env: 'sokoban',
    seed: 1,
    totalSteps: 4,
    config: { steps: 4, checkpointEvery: 2 },
    status: 'running',
  });
  return rec.id;
}

it("a run owned by this process's pid before this process started is the dead predecessor's: marked interrupted, resumed", async () => {
  const store = await RunStore.open(dir);
  const dead = await runningRun(store);
  const live = await runningRun(store);
  await writeFile(
    join(store.runDir(dead), '.owner'),
    JSON.stringify({ pid: process.pid, since: new Date(beforeThisProcess()).toISOString() }),
  );
  // This process's own claim (written after it started) is alive, as before.
  await store.claimRun(live);
  expect(await store.ownerOf(dead)).toEqual({ pid: process.pid, alive: false });
  expect(await store.ownerOf(live)).toEqual({ pid: process.pid, alive: true });
  expect((await store.markDeadOwners()).map((d) => d.id)).toEqual([dead]);
  expect((await store.getRun(live))!.status).toBe('running');
  await store.close();

  // The CLI's resume of the predecessor's run (its status reset to running by hand, as the kill left it).
  const again = await RunStore.open(dir);
  await again.updateRun(dead, { status: 'running' });
  await writeFile(
    join(again.runDir(dead), '.owner'),
    JSON.stringify({ pid: process.pid, since: new Date(beforeThisProcess()).toISOString() }),
  );
  await again.close();
  const c = testCliContext(dir);
  expect(await resume.run([dead], { ...c.ctx, jobs: syntheticJobs() }), c.err()).toBe(0);
  expect(c.err()).not.toContain('in another process');
  const after = await RunStore.open(dir);
  expect((await after.getRun(dead))!.status).toBe('completed');
  await after.close();
});

it("the catalog lock a dead predecessor with this process's pid held is taken over at once, not after it turns stale", async () => {
  const lock = join(dir, 'runs.json.lock');
  await writeFile(lock, JSON.stringify({ pid: process.pid, host: hostname(), at: beforeThisProcess(), nonce: 'dead' }));
  const t0 = Date.now();
  const token = await acquire(lock, { staleMs: 600_000, timeoutMs: 1500 }).catch((e: unknown) => e);
  expect(token, 'waited for its own dead predecessor').not.toBeInstanceOf(LockTimeoutError);
  expect(Date.now() - t0).toBeLessThan(1500);
  await release(lock, token as string);

  // A lock this process took (another of its callers holds it) is still waited for.
  const held = await acquire(lock);
  await expect(acquire(lock, { staleMs: 600_000, timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
  await release(lock, held);
});
