/**
 * After a session's end SIGKILLs every process, the next session's processes are handed pids from low numbers
 * again, so the process that looks at a dead one's files may itself carry the dead one's pid. Here the dead
 * predecessor is simulated in this test process: an owner or lock file naming this process's own pid, written
 * before this process started (what a killed process of the previous session with the same pid left). Each was
 * taken for this process's own and alive: `arlarena resume` refused the run ("is running in another process"),
 * `arlarena runs` never marked it interrupted, and the catalog's lock was waited on until it turned stale.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
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

/**
 * A claim's time is wall-clock time, and so is the start /proc gives a process (the boot time, /proc/stat btime, plus
 * its start in ticks since boot): a step of the wall clock (an NTP correction, a VM's clock set forward after the
 * host slept — WSL2 after every sleep) moves every process's start by the step, and a live owner's claim, written
 * before the step, read as written before its owner started — a live run marked interrupted, resumable a second
 * time; a live lock taken over. A claim now names its process's start in ticks since boot, which no clock step
 * changes.
 */
it('a live owner is alive after a forward step of the wall clock (its claim then dates from before its start)', async () => {
  const store = await RunStore.open(dir);
  const live = await runningRun(store);
  await store.claimRun(live);
  // the claim as it reads after the clock was set 10 minutes forward: its `since` 10 minutes before this process started
  const claim = JSON.parse(await readFile(join(store.runDir(live), '.owner'), 'utf8')) as Record<string, unknown>;
  await writeFile(
    join(store.runDir(live), '.owner'),
    JSON.stringify({ ...claim, since: new Date(beforeThisProcess() - 540_000).toISOString() }),
  );
  expect(await store.ownerOf(live)).toEqual({ pid: process.pid, alive: true });
  expect(await store.markDeadOwners()).toEqual([]);
  expect((await store.getRun(live))!.status).toBe('running');
  await store.close();
});

it('a live lock is not taken over after a forward step of the wall clock', async () => {
  const lock = join(dir, 'runs.json.lock');
  const held = await acquire(lock);
  const content = JSON.parse(await readFile(lock, 'utf8')) as Record<string, unknown>;
  // as it reads after the clock was set 10 minutes forward (its holder, this process, is alive and still holds it)
  await writeFile(lock, JSON.stringify({ ...content, at: beforeThisProcess() - 540_000 }));
  await expect(acquire(lock, { staleMs: 3_600_000, timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
  await writeFile(lock, held);
  await release(lock, held);
});

it("a live bundle import's stage is not swept after a forward step of the wall clock", async () => {
  const store = await RunStore.open(dir);
  const stage = store.newStageDir();
  await mkdir(stage, { recursive: true });
  await store.close();
  // as it reads after the clock was set an hour forward: last changed before this process (its importer) started
  const before = new Date(beforeThisProcess() - 3_600_000);
  await utimes(stage, before, before);
  const again = await RunStore.open(dir);
  await again.close();
  expect(existsSync(stage), 'the live import’s stage').toBe(true);
});
