/**
 * What a killed import left in <dataDir>/.imports/<pid>-… is removed by the next import once its process is gone —
 * judged by the pid alone, so after a session's end (every process SIGKILLed, pids handed out from low numbers
 * again) a folder whose pid now belongs to the importing process itself, or to any live process started since,
 * stayed for good: a killed import of a large log left its half-built runs on the disk. The folder's last change
 * is its importer's lifetime: a process started after it is not its importer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';
import { importLogs, STAGING_DIR } from './importLogs';

let dir: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-staging-reuse-'));
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** A staging folder as a killed import leaves it (a run store being built), last changed at `atMs`. */
async function leftStaging(data: string, name: string, atMs: number): Promise<string> {
  const d = join(data, STAGING_DIR, name);
  await mkdir(join(d, 'runs', 'half'), { recursive: true });
  await writeFile(join(d, 'runs', 'half', 'metrics.jsonl'), '{"step":1,"values":{}}\n');
  for (const p of [join(d, 'runs', 'half'), join(d, 'runs'), d]) await utimes(p, atMs / 1000, atMs / 1000);
  return d;
}

/** A live process started now (after every folder above was last changed). */
async function liveProcess(): Promise<number> {
  const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  children.push(c);
  await new Promise((r) => c.once('spawn', r));
  return c.pid!;
}

it("a killed import's staging folder whose pid is now this process's, or a later process's, is removed by the next import", async () => {
  const data = join(dir, 'data');
  const store = await RunStore.open(data);
  try {
    const before = Date.now() - process.uptime() * 1000 - 60_000;
    const ownPid = await leftStaging(data, `${process.pid}-0123456789ab`, before);
    const laterPid = await leftStaging(data, `${await liveProcess()}-ba9876543210`, before);
    const log = join(dir, 'train.log');
    await writeFile(log, 'step:1 - actor/entropy:0.5 - critic/score/mean:0.1\nstep:2 - actor/entropy:0.4 - critic/score/mean:0.2\n');
    const r = await importLogs(store, [log]);
    expect(r.steps).toBe(2);
    expect(existsSync(ownPid), 'the staging folder of a dead import with this process’s pid').toBe(false);
    expect(existsSync(laterPid), 'the staging folder of a dead import whose pid a later process holds').toBe(false);
    expect(await readdir(join(data, STAGING_DIR))).toEqual([]);
  } finally {
    await store.close();
  }
});

it('the staging folder of an import that is still running (its process started before the folder changed) stays', async () => {
  const data = join(dir, 'data');
  const store = await RunStore.open(data);
  try {
    const pid = await liveProcess();
    await new Promise((r) => setTimeout(r, 50));
    const live = await leftStaging(data, `${pid}-00000000beef`, Date.now() + 3000);
    const log = join(dir, 'train.log');
    await writeFile(log, 'step:1 - actor/entropy:0.5 - critic/score/mean:0.1\n');
    await importLogs(store, [log]);
    expect(existsSync(live)).toBe(true);
  } finally {
    await store.close();
  }
});
