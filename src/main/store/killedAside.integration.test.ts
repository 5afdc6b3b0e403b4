/**
 * Folders a killed command leaves beside the runs (runs/.NAME, never listed as runs): `arlarena runs delete`
 * renames the run's folder to `.deleted-ID-…` and then removes it, and a bundle import builds the run in
 * `.import-…` and renames it in when whole. A kill between (a session's end SIGKILLing the command) left the
 * folder — a whole run's files, its checkpoints included — on disk for good: nothing ever removed them. The kills
 * here are real: the CLI with a kill point in its own process (testing/cliKillPoint.mjs).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI, KILL_POINT_CLI, runNode as cli, tempDirForFile } from '../testing/cliKill';
import { RunStore } from './runStore';
import { WRITER_TAG } from '../platform/process';

const tmp = tempDirForFile('arl-killed-aside-');

const aside = async (data: string) => (await readdir(join(data, 'runs'))).filter((n) => n.startsWith('.')).sort();

async function runIds(data: string): Promise<string[]> {
  const store = await RunStore.open(data);
  try {
    return (await store.listRuns()).map((r) => r.id);
  } finally {
    await store.close();
  }
}

it('a run deletion and a bundle import killed half-way leave nothing beside the runs once any command opens the store', async () => {
  const data = join(tmp.path, 'data');
  const bundle = join(tmp.path, 'run.arlarena.zip');
  expect((await cli([CLI, '--data-dir', data, 'runs', 'synth', '--steps', '4'])).code).toBe(0);
  const [id] = await runIds(data);
  const exported = await cli([CLI, '--data-dir', data, 'export', id, '--out', bundle]);
  expect(exported.code, exported.err).toBe(0);

  const deleted = await cli([KILL_POINT_CLI, '1', 'delete-trash', '--data-dir', data, 'runs', 'delete', id]);
  expect(deleted.signal, deleted.err).toBe('SIGKILL');
  expect(await aside(data)).toEqual([expect.stringMatching(new RegExp(`^\\.deleted-${id}-`))]);
  const imported = await cli([KILL_POINT_CLI, '2', 'atomic-before-rename', '--data-dir', data, 'import', bundle]);
  expect(imported.signal, imported.err).toBe('SIGKILL');
  // the stage names its writer (writerTag: pid, start, host), judged by it at the next open
  expect(await aside(data)).toContainEqual(expect.stringMatching(new RegExp(`^\\.import-${WRITER_TAG}-[0-9a-f]+$`)));

  const look = await cli([CLI, '--data-dir', data, 'runs']);
  expect(look.code, look.err).toBe(0);
  expect(await aside(data)).toEqual([]);
  expect(await runIds(data)).toEqual([]);
  // The bundle imports whole afterwards.
  expect((await cli([CLI, '--data-dir', data, 'import', bundle])).code).toBe(0);
  expect(await runIds(data)).toHaveLength(1);
}, 120_000);
