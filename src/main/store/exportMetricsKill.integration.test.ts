/**
 * `arlarena export RUN --format csv|jsonl|tensorboard` streams the file to a hidden partial beside the output and
 * renames it in when complete. Killed mid-way (a session's end SIGKILLing it), the partial stayed there for good,
 * one per run and folder — in the user's --out folder, or the data dir's exports/. The next metrics export to that
 * folder removes the partials whose writer is gone, and only those: a live export's and the user's own files stay.
 * The kill is real: the CLI with a kill point in its own process (testing/cliKillPoint.mjs).
 */
import { mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI, KILL_POINT_CLI, runNode as cli, tempDirForFile } from '../testing/cliKill';
import { RunStore } from './runStore';

const tmp = tempDirForFile('arl-metrics-kill-');

it('a metrics export killed mid-way leaves no partial once the next export to that folder runs; live and foreign files stay', async () => {
  const data = join(tmp.path, 'data');
  for (const seed of ['1', '2'])
    expect((await cli([CLI, '--data-dir', data, 'runs', 'synth', '--steps', '3', '--seed', seed])).code).toBe(0);
  const store = await RunStore.open(data);
  const [a, b] = (await store.listRuns()).map((r) => r.id);
  await store.close();
  const outDir = join(tmp.path, 'out');
  await mkdir(outDir);
  // The user's own file, a partial a live export in this process is writing now (named by its writer, this pid,
  // changed now), and one an older version's export killed a day ago (named by the run alone).
  const live = `.arlarena-export-${b}.${process.pid}-7.partial`;
  const old = `.arlarena-export-${b}.partial`;
  await writeFile(join(outDir, 'notes.partial'), 'keep');
  await writeFile(join(outDir, live), 'step,x\n');
  await writeFile(join(outDir, old), 'step,x\n');
  const dayAgo = new Date(Date.now() - 86_400_000);
  await utimes(join(outDir, old), dayAgo, dayAgo);

  // Killed after its first chunk, an export leaves its partial, named by the run and its dead writer; the next
  // export to the folder (another run's, killed too) removes it, and the old unnamed one.
  const killedExport = async (id: string, format: string) => {
    const killed = await cli([
      KILL_POINT_CLI,
      '1',
      'metrics-export-chunk',
      '--data-dir',
      data,
      'export',
      id,
      '--format',
      format,
      '--out',
      join(outDir, `${id}.${format}`),
    ]);
    expect(killed.signal, killed.err).toBe('SIGKILL');
    return (await readdir(outDir)).filter((n) => n.endsWith('.partial') && n !== live && n !== 'notes.partial');
  };
  // named by its writer (writerTag: p<pid>s<start>h<host>)
  const partialOf = (id: string) => new RegExp(`^\\.arlarena-export-${id}\\.p\\d+(?:s\\d+)?h[0-9a-f]{8}-1\\.partial$`);
  expect(await killedExport(a, 'csv')).toEqual([expect.stringMatching(partialOf(a))]);
  expect(await killedExport(b, 'jsonl')).toEqual([expect.stringMatching(partialOf(b))]);

  const again = await cli([CLI, '--data-dir', data, 'export', a, '--format', 'csv', '--out', join(outDir, `${a}.csv`)]);
  expect(again.code, again.err).toBe(0);
  expect((await readdir(outDir)).sort()).toEqual([`${a}.csv`, live, 'notes.partial'].sort());
  expect((await readFile(join(outDir, `${a}.csv`), 'utf8')).split('\n').filter(Boolean)).toHaveLength(4);
}, 90_000);
