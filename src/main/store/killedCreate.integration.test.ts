/**
 * A process SIGKILLed while it creates a run (the app starting one, a study its next, `arlarena runs synth`) leaves
 * the run's folder without its record: the two empty streams createRun touches first and, at most, the record's
 * temp file. Nothing was trained or imported into it and its creator never learnt its id, yet every later command
 * warned "folder has no run.json; it is not listed (its files are kept)" for good. The kill here is real: the CLI
 * with a kill point in its own process (testing/cliKillPoint.mjs) at the record's write.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RunStore } from './runStore';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-killed-create-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function cli(args: readonly string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    c.stderr.on('data', (d) => (err += String(d)));
    c.on('close', (code, signal) => resolve({ code, signal, err }));
  });
}

it('a run whose creation a kill cut short (no record yet, nothing written) is removed, not warned about for good', async () => {
  const data = join(dir, 'data');
  const killPoint = join(ROOT, 'src', 'main', 'testing', 'cliKillPoint.mjs');
  const killed = await cli([killPoint, '1', 'atomic-before-rename', '--data-dir', data, 'runs', 'synth', '--steps', '3']);
  expect(killed.signal, killed.err).toBe('SIGKILL');
  const [id] = await readdir(join(data, 'runs'));
  expect((await readdir(join(data, 'runs', id))).filter((n) => !n.startsWith('.')).sort()).toEqual(['metrics.jsonl', 'trajectories.jsonl']);

  // A run folder with files of its own but no record is still kept and named (a record lost by hand).
  const kept = join(data, 'runs', 'kept-by-hand');
  await mkdir(kept);
  await writeFile(join(kept, 'metrics.jsonl'), '{"step":1,"values":{"a":1}}\n');

  const store = await RunStore.open(data);
  try {
    expect(store.warnings.join('\n')).not.toContain(`Run ${id}: folder has no run.json`);
    expect(existsSync(join(data, 'runs', id))).toBe(false);
    expect(store.warnings.join('\n')).toContain('Run kept-by-hand: folder has no run.json; it is not listed (its files are kept).');
    expect(existsSync(kept)).toBe(true);
    expect(await store.listRuns()).toEqual([]);
  } finally {
    await store.close();
  }
  // And the next command says nothing more of it.
  const next = await cli([join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', data, 'runs']);
  expect(next.code, next.err).toBe(0);
  expect(next.err).not.toContain(id);
}, 60_000);
