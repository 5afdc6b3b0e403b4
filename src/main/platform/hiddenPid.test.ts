/**
 * pidAlive on a /proc mounted with hidepid=invisible (a shared server's hardening): another user's processes have no
 * /proc entry (ENOENT, as a gone process's), while signal 0 still answers for them. Read as absent, another user's
 * live lab on a shared data dir lost its temps to this user's store open, and its runs and lock read as a dead
 * process's. Here the entry of a live child of this test is hidden the same way (node:fs's readFileSync answers
 * ENOENT for /proc/<its pid>/…); the probe then decides, and a gone process still reads as gone.
 */
import { spawn } from 'node:child_process';
import { afterEach, expect, it, vi } from 'vitest';

const hidden = vi.hoisted(() => new Set<number>());
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readFileSync = ((path: Parameters<typeof fs.readFileSync>[0], ...rest: unknown[]) => {
    const m = /^\/proc\/(\d+)\//.exec(String(path));
    if (m && hidden.has(Number(m[1])))
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${String(path)}'`), { code: 'ENOENT' });
    return (fs.readFileSync as (...a: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readFileSync;
  return { ...fs, default: { ...fs, readFileSync }, readFileSync };
});

const { pidAlive, processStartTicks } = await import('./process');

afterEach(() => hidden.clear());

it.runIf(process.platform === 'linux')('a live process whose /proc entry is hidden reads alive; once killed, gone', async () => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
  await new Promise((r) => child.once('spawn', r));
  const pid = child.pid!;
  const start = processStartTicks(pid);
  hidden.add(pid);
  try {
    expect(processStartTicks(pid), 'its entry is hidden').toBeNull();
    expect(pidAlive(pid, Date.now() - 60_000, start)).toBe(true);
    expect(pidAlive(pid)).toBe(true);
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
  expect(pidAlive(pid, Date.now() - 60_000, start)).toBe(false);
});
