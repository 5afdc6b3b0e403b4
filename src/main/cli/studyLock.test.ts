/**
 * The study lock's cases in one process (the lock held here, the commands run in-process): which commands and
 * arguments take it, what the refusal says, and the holders taken over at once — a dead process, this process's own
 * pid recorded before it started (a session's end hands pids out again). Two real processes, one frozen and then
 * killed, are studyLock.integration.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StudyBusyError, lockStudy, studyLockFile } from '../app/studies/studyLock';
import { testCliContext } from '../testing/testContext';
import arena from './commands/arena';
import ladder from './commands/ladder';
import { studyNameArg } from './studyLock';
import { UsageError } from './types';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-study-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A lock file of study `name` as another process would have left it. */
async function leaveLock(data: string, kind: 'ladder' | 'arena', name: string, owner: { pid: number; host: string; at: number }) {
  await mkdir(join(data, 'studies'), { recursive: true });
  await writeFile(studyLockFile(data, kind, name), JSON.stringify({ ...owner, nonce: 'left' }));
}

describe('held by a live process', () => {
  it('refuses a ladder of that name — its run, --resume, --export-ledger, arena --ladder — naming the pid, since when and the fix', async () => {
    const data = join(dir, 'live-ladder');
    const unlock = await lockStudy(data, 'ladder', 'held');
    try {
      for (const args of [
        ['--study', 'held', '--export-ledger'],
        ['--study=held', '--resume'],
        ['--study', 'held', '--levels', '0', '--presets', 'grpo', '--seeds', '1'],
      ]) {
        const c = testCliContext(data);
        const refused = await ladder.run(args, c.ctx).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(StudyBusyError);
        const m = (refused as Error).message;
        expect(m).toMatch(
          new RegExp(`^ladder "held" is running in process ${process.pid} since \\d{4}-\\d\\d-\\d\\dT[^ ]+Z \\(0\\.0 min\\)`),
        );
        expect(m).toContain('would train the same unfinished runs and append to the same ledger');
        expect(m).toContain(`kill ${process.pid}`);
        expect(m).toContain(studyLockFile(data, 'ladder', 'held'));
      }
      const viaArena = await arena
        .run(['--ladder', '--study', 'held', '--export-ledger'], testCliContext(data).ctx)
        .catch((e: unknown) => e);
      expect(viaArena).toBeInstanceOf(StudyBusyError);
      // Another ladder is not held: it gets as far as its own refusal (there is no ladder "other" to export).
      const other = await ladder.run(['--study', 'other', '--export-ledger'], testCliContext(data).ctx).catch((e: unknown) => e);
      expect(other).toBeInstanceOf(UsageError);
      expect((other as Error).message).toContain('no ladder "other"');
      expect(existsSync(studyLockFile(data, 'ladder', 'other'))).toBe(false);
    } finally {
      await unlock();
    }
    expect(existsSync(studyLockFile(data, 'ladder', 'held'))).toBe(false);
  });

  it('refuses an arena study of that name, started or resumed; an arena study does not hold the ladder of its name', async () => {
    const data = join(dir, 'live-arena');
    const unlock = await lockStudy(data, 'arena', 'held');
    try {
      for (const args of [
        ['--study', 'held', '--resume'],
        ['--study', 'held', '--presets', 'grpo', '--seeds', '1'],
      ]) {
        const refused = await arena.run(args, testCliContext(data).ctx).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(StudyBusyError);
        expect((refused as Error).message).toMatch(
          new RegExp(`^study "held" is running in process ${process.pid} since .*write the same study's files.*kill ${process.pid}`),
        );
      }
      const ladderOfName = await ladder.run(['--study', 'held', '--export-ledger'], testCliContext(data).ctx).catch((e: unknown) => e);
      expect(ladderOfName).toBeInstanceOf(UsageError);
    } finally {
      await unlock();
    }
  });

  it('on another host (a shared data dir) it cannot be judged: refused, with the file to delete if nothing there runs it', async () => {
    const data = join(dir, 'other-host');
    await leaveLock(data, 'ladder', 'far', { pid: process.pid, host: `not-${hostname()}`, at: Date.now() - 3_600_000 });
    const refused = await ladder.run(['--study', 'far', '--export-ledger'], testCliContext(data).ctx).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StudyBusyError);
    expect((refused as Error).message).toMatch(/^ladder "far" is running in process \d+ on host not-.* \(60\.0 min\)/);
    expect((refused as Error).message).toContain(`delete ${studyLockFile(data, 'ladder', 'far')} and run this again`);
  });
});

describe('taken over at once', () => {
  it("from a process that is gone, and from this process's own pid recorded before it started (a session's end)", async () => {
    const data = join(dir, 'dead');
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    await leaveLock(data, 'ladder', 'gone', { pid: gone, host: hostname(), at: Date.now() - 1000 });
    await leaveLock(data, 'arena', 'mine', { pid: process.pid, host: hostname(), at: Date.now() - 86_400_000 });
    // The temp a process killed while taking the lock left (its content, written first, then linked into place).
    const killedTemp = join(data, 'studies', `.${basename(studyLockFile(data, 'ladder', 'gone'))}.${gone}-0-1.tmp`);
    await writeFile(killedTemp, '{}');
    const t0 = Date.now();
    const took = await ladder.run(['--study', 'gone', '--export-ledger'], testCliContext(data).ctx).catch((e: unknown) => e);
    expect((took as Error).message).toContain('no ladder "gone"');
    const mine = await arena.run(['--study', 'mine', '--resume'], testCliContext(data).ctx).catch((e: unknown) => e);
    expect((mine as Error).message).toContain('no study "mine"');
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(existsSync(studyLockFile(data, 'ladder', 'gone'))).toBe(false);
    expect(existsSync(studyLockFile(data, 'arena', 'mine'))).toBe(false);
    expect(existsSync(killedTemp)).toBe(false);
  });
});

it('--study as the commands parse it: either spelling, the last one, none after --, a bad name left to the command', () => {
  expect(studyNameArg(['--levels', '0', '--study', 'a'])).toBe('a');
  expect(studyNameArg(['--study=a', '--study', 'b'])).toBe('b');
  expect(studyNameArg(['--', '--study', 'a'])).toBeUndefined();
  expect(studyNameArg(['--study', '../x'])).toBeUndefined();
  expect(studyNameArg(['--presets', 'grpo'])).toBeUndefined();
});
