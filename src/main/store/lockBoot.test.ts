/**
 * The data dir's lock judges its holder by this machine's pids only when the holder runs on this machine: its host
 * name and, where the lock records it, its boot (bootId). By the name alone, a holder on another machine named alike
 * (localhost, an image's default, a cloned VM) sharing the data dir over the network read as a gone process here and
 * its lock was taken over at once while it wrote the catalog — two writers of runs.json.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { bootId } from '../platform/process';
import { acquire, LockTimeoutError, release, withFileLock } from './fileLock';

let dir: string;
let lock: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-lock-boot-'));
  lock = join(dir, 'runs.json.lock');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it.runIf(bootId() !== null)("a holder on another machine with this host name is not judged by this machine's pids", async () => {
  // pid 999999999 is no process here; on the other machine it is the live holder
  const other = { pid: 999999999, host: hostname(), at: Date.now(), nonce: 'x', start: 1, boot: '6b7f3c1e-0000-4000-8000-000000000000' };
  await writeFile(lock, JSON.stringify(other));
  const err = await withFileLock(lock, async () => 'in', { staleMs: 60_000, timeoutMs: 300 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LockTimeoutError);
  expect(JSON.parse(await readFile(lock, 'utf8'))).toEqual(other);
  // Past the age limit it is taken over, as another host's lock is.
  await writeFile(lock, JSON.stringify({ ...other, at: Date.now() - 10_000 }));
  expect(await withFileLock(lock, async () => 'in', { staleMs: 5_000, timeoutMs: 1_000 })).toBe('in');
  // This machine's own dead holder (its boot) is taken over at once, as before.
  await writeFile(lock, JSON.stringify({ ...other, boot: bootId() }));
  expect(await withFileLock(lock, async () => 'in', { staleMs: 60_000, timeoutMs: 300 })).toBe('in');
});

it.runIf(bootId() !== null)('a lock records its holder’s boot', async () => {
  const token = await acquire(lock);
  try {
    expect(JSON.parse(await readFile(lock, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname(), boot: bootId() });
  } finally {
    await release(lock, token);
  }
});
