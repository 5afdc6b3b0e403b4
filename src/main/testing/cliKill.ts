/**
 * Test kit for the kill tests: the CLI and its kill-point wrapper (cliKillPoint.mjs: the CLI killed with SIGKILL at
 * a named write boundary in its own process), a runner that keeps stderr, and one temp folder per test file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
/** `arlarena` itself. */
export const CLI = join(REPO_ROOT, 'bin', 'arlarena.mjs');
/** `node KILL_POINT_CLI <n> <point> ...args`: the CLI, SIGKILLed at the n-th pass of `point`. */
export const KILL_POINT_CLI = join(REPO_ROOT, 'src', 'main', 'testing', 'cliKillPoint.mjs');

export interface NodeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  err: string;
}

/** `node ...argv` in the repository root; resolves when it ends (killed included) with its stderr. */
export function runNode(argv: readonly string[]): Promise<NodeExit> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err += String(d)));
    c.on('close', (code, signal) => resolve({ code, signal, err }));
  });
}

/**
 * A temp folder made before the file's tests and removed after them; call at the top level, read `.path` in tests.
 * The processes a test pushes to `.started` are SIGKILLed first, so none is left writing into the folder.
 */
export function tempDirForFile(prefix: string): { readonly path: string; readonly started: ChildProcess[] } {
  const holder = { path: '', started: [] as ChildProcess[] };
  beforeAll(async () => {
    holder.path = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    for (const c of holder.started) c.kill('SIGKILL');
    await rm(holder.path, { recursive: true, force: true });
  });
  return holder;
}
