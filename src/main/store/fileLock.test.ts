import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockTimeoutError, acquire, release, withFileLock } from './fileLock';
import { processStartTicks } from '../platform/process';

let dir: string;
let lock: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-lock-'));
  lock = join(dir, 'runs.json.lock');
});
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

function liveChild(): number {
  const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
  children.push(c);
  return c.pid!;
}

async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => c.on('exit', r));
  return c.pid!;
}

const holder = (pid: number, ageMs: number) => JSON.stringify({ pid, host: hostname(), at: Date.now() - ageMs, nonce: 'x' });

describe('fileLock', () => {
  it('lets one holder in at a time and removes the lock (and its temp files) afterwards', async () => {
    let inside = 0;
    let maxInside = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        withFileLock(lock, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await new Promise((r) => setTimeout(r, 5));
          order.push(i);
          inside--;
        }),
      ),
    );
    expect(maxInside).toBe(1);
    expect(order.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('the lock file names its holder', async () => {
    const token = await acquire(lock);
    const o = JSON.parse(await readFile(lock, 'utf8')) as { pid: number; host: string; at: number };
    expect(o.pid).toBe(process.pid);
    expect(o.host).toBe(hostname());
    expect(Math.abs(Date.now() - o.at)).toBeLessThan(60_000);
    await release(lock, token);
    expect(await readdir(dir)).toEqual([]);
  });

  it('takes over at once a lock whose holder process is gone (kill -9), even a fresh one', async () => {
    await writeFile(lock, holder(await deadPid(), 0));
    // A timeout far below the stale age: only the dead-pid rule can let it in.
    expect(await withFileLock(lock, async () => 'in', { staleMs: 60_000, timeoutMs: 500 })).toBe('in');
  });

  it('takes over a lock held longer than the stale bound by a live process', async () => {
    await writeFile(lock, holder(liveChild(), 10_000));
    expect(await withFileLock(lock, async () => 'in', { staleMs: 5_000, timeoutMs: 1_000 })).toBe('in');
  });

  // without /proc nothing proves a holder alive, and the age rule stays
  it.skipIf(processStartTicks() === null)(
    'does not take over by age a lock whose holder on this host is provably alive (its start)',
    async () => {
      // A slow holder (a createRun on a loaded disk) keeps the lock past staleMs; taking it over let another process's
      // cleanup remove the holder's half-made run folder. Its pid and its start in ticks since boot say it is running.
      const pid = liveChild();
      const start = processStartTicks(pid)!;
      await writeFile(lock, JSON.stringify({ pid, host: hostname(), at: Date.now() - 10_000, nonce: 'x', start }));
      const err = await withFileLock(lock, async () => 'in', { staleMs: 5_000, timeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LockTimeoutError);
      expect(JSON.parse(await readFile(lock, 'utf8')).pid).toBe(pid);
      // Another process that was handed its pid (another start) is not its holder: taken over at once.
      await writeFile(lock, JSON.stringify({ pid, host: hostname(), at: Date.now(), nonce: 'x', start: start + 1 }));
      expect(await withFileLock(lock, async () => 'in', { staleMs: 60_000, timeoutMs: 300 })).toBe('in');
      // Another host's holder (its pid cannot be checked here) is still taken over by age.
      await writeFile(lock, JSON.stringify({ pid, host: `not-${hostname()}`, at: Date.now() - 10_000, nonce: 'x', start }));
      expect(await withFileLock(lock, async () => 'in', { staleMs: 5_000, timeoutMs: 1_000 })).toBe('in');
    },
  );

  it('waits for a live holder, then fails with who holds it and how to clear it', async () => {
    const pid = liveChild();
    await writeFile(lock, holder(pid, 0));
    const err = await withFileLock(lock, async () => 'in', { staleMs: 60_000, timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockTimeoutError);
    expect((err as Error).message).toContain(`held by process ${pid} on ${hostname()}`);
    expect((err as Error).message).toContain(`delete ${lock}`);
    // The live holder's lock is untouched.
    expect(JSON.parse(await readFile(lock, 'utf8')).pid).toBe(pid);
  });

  it('an unreadable lock file is stale only once it is a few seconds old', async () => {
    await writeFile(lock, '');
    await expect(withFileLock(lock, async () => 'in', { staleMs: 60_000, timeoutMs: 200 })).rejects.toThrow(/an unreadable lock/);
    const old = new Date(Date.now() - 30_000);
    await utimes(lock, old, old);
    expect(await withFileLock(lock, async () => 'in', { staleMs: 60_000, timeoutMs: 200 })).toBe('in');
  });

  it('release leaves alone a lock that is no longer ours', async () => {
    const token = await acquire(lock);
    const other = holder(liveChild(), 0);
    await writeFile(lock, other);
    await release(lock, token);
    expect(await readFile(lock, 'utf8')).toBe(other);
  });
});
