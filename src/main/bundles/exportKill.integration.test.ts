/**
 * `arlarena export` writes the bundle to a temp file beside it and renames it in. Killed before the rename (a
 * session's end SIGKILLing it), the temp — a whole bundle, checkpoint included — stayed beside the user's file for
 * good, one more per killed export. The next export to that path removes the temps whose writer is gone, and only
 * those: other files in the folder (it may be the user's) are not touched. The kill is real: the CLI with a kill
 * point in its own process (testing/cliKillPoint.mjs).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI, KILL_POINT_CLI, runNode as cli, tempDirForFile } from '../testing/cliKill';
import { RunStore } from '../store/runStore';

const tmp = tempDirForFile('arl-export-kill-');

it("an export killed before its rename leaves no temp once the bundle is exported again, and others' files stay", async () => {
  const data = join(tmp.path, 'data');
  expect((await cli([CLI, '--data-dir', data, 'runs', 'synth', '--steps', '3'])).code).toBe(0);
  const store = await RunStore.open(data);
  const [run] = await store.listRuns();
  await store.close();
  const outDir = join(tmp.path, 'out');
  await mkdir(outDir);
  // Someone else's temp file in the same folder, named as a writer's would be.
  await writeFile(join(outDir, '.notes.txt.1-0-1.tmp'), 'keep');
  const out = join(outDir, 'run.arlarena.zip');

  const killed = await cli([KILL_POINT_CLI, '1', 'atomic-before-rename', '--data-dir', data, 'export', run.id, '--out', out]);
  expect(killed.signal, killed.err).toBe('SIGKILL');
  expect((await readdir(outDir)).sort()).toEqual(
    ['.notes.txt.1-0-1.tmp', expect.stringMatching(/^\.run\.arlarena\.zip\.p\d+(?:s\d+)?h[0-9a-f]{8}-0-1\.tmp$/)].sort(),
  );

  const again = await cli([CLI, '--data-dir', data, 'export', run.id, '--out', out]);
  expect(again.code, again.err).toBe(0);
  expect((await readdir(outDir)).sort()).toEqual(['.notes.txt.1-0-1.tmp', 'run.arlarena.zip']);
}, 60_000);
