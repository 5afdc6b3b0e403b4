/**
 * writerTag names a temp's writer (pid, start in ticks since boot, host) and writerState judges it: alive while that
 * process runs, gone once it is killed, and not judged by this host's pids when another host wrote it (a data dir on
 * a network share, or bind-mounted into two containers) — the run store's open then falls back to the temp's age, as
 * it did for every temp before names carried their writer.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { hostTagOf, processStartTicks, WRITER_TAG, writerState, writerTag } from './process';
import { RunStore } from '../store/runStore';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-writer-tag-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("names this process's pid, its start in ticks since boot and its host, and judges a writer alive, gone or elsewhere", async () => {
  const m = new RegExp(`^${WRITER_TAG}$`).exec(writerTag());
  expect(m, writerTag()).not.toBeNull();
  expect(Number(m![1])).toBe(process.pid);
  if (processStartTicks() !== null) expect(Number(m![2])).toBe(processStartTicks());
  expect(writerState(m![1]!, m![2], m![3]!, Date.now())).toBe('alive');
  const other = m![3] === '00000000' ? '00000001' : '00000000';
  expect(writerState(m![1]!, m![2], other, Date.now())).toBe('elsewhere');

  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  await new Promise((r) => child.once('spawn', r));
  const start = processStartTicks(child.pid!);
  const startText = start !== null ? String(start) : undefined;
  expect(writerState(String(child.pid), startText, m![3]!, Date.now())).toBe('alive');
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  expect(writerState(String(child.pid), startText, m![3]!, Date.now())).toBe('gone');
});

it("another host's temp is judged by its age at the store's open, as before names carried their writer", async () => {
  const store = await RunStore.open(dir);
  await store.close();
  const host = /h([0-9a-f]{8})$/.exec(writerTag())![1]!;
  const elsewhere = host === '00000000' ? '00000001' : '00000000';
  // pid 999999999 is no process here; on another host it may be a live writer's
  const young = join(dir, `.runs.json.p999999999s1h${elsewhere}-0-1.tmp`);
  const old = join(dir, `.runs.json.p999999999s1h${elsewhere}-0-2.tmp`);
  await writeFile(young, '{}');
  await writeFile(old, '{}');
  const twoMinutesAgo = new Date(Date.now() - 120_000);
  await utimes(old, twoMinutesAgo, twoMinutesAgo);
  const again = await RunStore.open(dir);
  await again.close();
  expect(existsSync(young), 'another host’s temp changed now').toBe(true);
  expect(existsSync(old), 'another host’s temp unchanged for two minutes').toBe(false);
});

it("a writer on another machine with this machine's host name is not judged by this machine's pids", () => {
  // Two machines named alike (localhost, an image's default, a cloned VM) writing one data dir over the network: the
  // other's writer, pid 999999999 there, is no process here, and its temp was removed under it as 'gone'.
  const there = hostTagOf(hostname(), '6b7f3c1e-0000-4000-8000-000000000000');
  expect(writerState('999999999', '1', there, Date.now())).toBe('elsewhere');
  // This machine's own tag still judges its own writers exactly.
  const here = new RegExp(`^${WRITER_TAG}$`).exec(writerTag())!;
  expect(writerState('999999999', '1', here[3]!, Date.now())).toBe('gone');
});
