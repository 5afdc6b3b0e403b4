import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStore } from './runStore';
import { exportMetrics, exportPath } from './exportMetrics';

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-export-metrics-'));
  store = await RunStore.open(dir);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const base = { preset: 'sampo', env: 'sokoban', seed: 3, config: {}, totalSteps: 3 };

describe('exportPath', () => {
  it('puts a TensorBoard export in a log directory unless the name says tfevents; csv/jsonl go to --out', () => {
    expect(exportPath('/d', 'r1', 'tensorboard', 1700000000.7)).toBe('/d/exports/r1/events.out.tfevents.1700000000.arlarena.r1');
    expect(exportPath('/d', 'r1', 'tensorboard', 5, '/x/logdir')).toBe('/x/logdir/events.out.tfevents.5.arlarena.r1');
    expect(exportPath('/d', 'r1', 'tensorboard', 5, '/x/events.out.tfevents.mine')).toBe('/x/events.out.tfevents.mine');
    expect(exportPath('/d', 'r1', 'csv', 5)).toBe('/d/exports/r1.csv');
    expect(exportPath('/d', 'r1', 'jsonl', 5, '/x/m.jsonl')).toBe('/x/m.jsonl');
  });
});

describe('exportMetrics', () => {
  it('refuses a run without metric records and leaves no file behind', async () => {
    const run = await store.createRun(base);
    const out = join(dir, 'out');
    await expect(exportMetrics(store, run.id, { format: 'csv', out: join(out, 'x.csv') })).rejects.toThrow(
      `run ${run.id} has no metric records to export`,
    );
    await expect(readdir(out)).rejects.toThrow(/ENOENT/);
  });

  it('writes the file under its final name only, with no temporary file left', async () => {
    const run = await store.createRun(base);
    await store.appendMetrics(run.id, [
      { step: 1, values: { 'actor/entropy': 0.5, 'kl/unused': Number.NaN } },
      { step: 2, values: { 'actor/entropy': 0.25, 'kl/unused': Number.NaN } },
    ]);
    await store.flush(run.id);
    const out = join(dir, 'csv-out', 'm.csv');
    const r = await exportMetrics(store, run.id, { format: 'csv', out });
    expect(r).toMatchObject({ format: 'csv', path: out, steps: 2, keys: 1 });
    expect(await readFile(out, 'utf8')).toBe('step,actor/entropy\n1,0.5\n2,0.25\n');
    expect(await readdir(join(dir, 'csv-out'))).toEqual(['m.csv']);
  });
});
