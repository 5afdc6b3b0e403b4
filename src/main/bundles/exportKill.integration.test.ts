/**
 * `arlarena export` writes the bundle to a temp file beside it and renames it in. Killed before the rename (a
 * session's end SIGKILLing it), the temp — a whole bundle, checkpoint included — stayed beside the user's file for
 * good, one more per killed export. The next export to that path removes the temps whose writer is gone, and only
 * those: other files in the folder (it may be the user's) are not touched. The kill is real: the CLI with a kill
 * point in its own process (testing/cliKillPoint.mjs).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const CLI = join(ROOT, 'bin', 'arlarena.mjs');
const KILL_POINT_CLI = join(ROOT, 'src', 'main', 'testing', 'cliKillPoint.mjs');
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-export-kill-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function cli(argv: readonly string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err += String(d)));
    c.on('close', (code, signal) => resolve({ code, signal, err }));
  });
}

it("an export killed before its rename leaves no temp once the bundle is exported again, and others' files stay", async () => {
  const data = join(dir, 'data');
  expect((await cli([CLI, '--data-dir', data, 'runs', 'synth', '--steps', '3'])).code).toBe(0);
  const store = await RunStore.open(data);
  const [run] = await store.listRuns();
  await store.close();
  const outDir = join(dir, 'out');
  await mkdir(outDir);
  // Someone else's temp file in the same folder, named as a writer's would be.
  await writeFile(join(outDir, '.notes.txt.1-0-1.tmp'), 'keep');
  const out = join(outDir, 'run.arlarena.zip');

  const killed = await cli([KILL_POINT_CLI, '1', 'atomic-before-rename', '--data-dir', data, 'export', run.id, '--out', out]);
  expect(killed.signal, killed.err).toBe('SIGKILL');
  expect((await readdir(outDir)).sort()).toEqual(
    ['.notes.txt.1-0-1.tmp', expect.stringMatching(/^\.run\.arlarena\.zip\.\d+-0-1\.tmp$/)].sort(),
  );

  const again = await cli([CLI, '--data-dir', data, 'export', run.id, '--out', out]);
  expect(again.code, again.err).toBe(0);
  expect((await readdir(outDir)).sort()).toEqual(['.notes.txt.1-0-1.tmp', 'run.arlarena.zip']);
}, 60_000);
