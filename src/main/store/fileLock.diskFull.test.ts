/**
 * The lock on a full disk, where its content cannot be written (the real full disk, a tmpfs, is in
 * src/main/sessions/diskFull.integration.test.ts, which is skipped where mounting is not allowed): every write of
 * file content fails with ENOSPC here, as on a disk with no block free, while creating an empty file still works.
 * Before, acquire threw ENOSPC, so even `runs delete`, the way to free space in the lab, could not run.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const full = (): never => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  return { ...real, default: real, writeFile: full };
});

const { LockTimeoutError, acquire, release } = await import('./fileLock');

let dir: string;
let lock: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-lock-full-'));
  lock = join(dir, 'runs.json.lock');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('with no room for its content the lock is taken empty, still excludes others, and is released', async () => {
  const token = await acquire(lock);
  expect((await stat(lock)).size).toBe(0);
  expect(await readFile(lock, 'utf8')).toBe('');
  // A fresh empty lock is held: another taker waits (and here gives up), it does not take it over.
  await expect(acquire(lock, { timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
  await release(lock, token);
  expect(await readdir(dir)).toEqual([]);
});
