/**
 * A tracker's database held locked by the process writing it (MLflow's rollback journal: a long commit, or a tool
 * holding BEGIN EXCLUSIVE) is refused in one line that says so, not as a damaged file. SQLite's busy error, met after
 * the reader's 10 s busy timeout, was reported as "could not be read as a SQLite database (database is locked): a
 * truncated, damaged or partly copied file? Copy it again …" — the file was whole, and the import works once the
 * writer lets go. The lock is held here by Python's sqlite3 in another process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import importCommand from '../cli/commands/import';
import { testCliContext } from '../testing/testContext';

const dir = mkdtempSync(join(tmpdir(), 'arl-locked-db-'));
let holder: ChildProcess | undefined;
afterAll(() => {
  holder?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A small SQLite database (MLflow's table names) whose writer holds an exclusive lock until it is killed. */
async function lockedDb(path: string): Promise<void> {
  const py = [
    'import sqlite3, sys, time',
    'c = sqlite3.connect(sys.argv[1], isolation_level=None)',
    "for t in ('experiments', 'runs', 'metrics', 'params', 'tags'): c.execute(f'CREATE TABLE {t} (x)')",
    "c.execute('BEGIN EXCLUSIVE')",
    "c.execute('INSERT INTO runs VALUES (1)')",
    "print('locked', flush=True)",
    'time.sleep(120)',
  ].join('\n');
  holder = spawn('python3', ['-c', py, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder!.stdout!.on('data', (d) => String(d).includes('locked') && resolve());
    holder!.once('exit', (code) => reject(new Error(`the lock holder ended (exit ${code})`)));
  });
}

it('a database locked by its writer is named as locked, with what to do, not as damaged', async () => {
  const db = join(dir, 'mlflow.db');
  await lockedDb(db);
  const c = testCliContext(join(dir, 'data'));
  expect(await importCommand.run([db], c.ctx)).toBe(1);
  const err = c.err();
  expect(err.trim().split('\n'), err).toHaveLength(1);
  expect(err).toContain(db);
  expect(err).toMatch(/locked by the process writing it/);
  expect(err).not.toMatch(/truncated|damaged|partly copied/);
}, 60_000);
