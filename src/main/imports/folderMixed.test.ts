/**
 * A folder holding trackers' runs and TensorBoard event files (a verl output folder run with
 * `trainer.logger=[console,mlflow,tensorboard]`: mlruns/ beside tensorboard_log/): the trackers' runs are imported and
 * the event files are not read — the result says how many were left out, where they once vanished without a word.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tensorboardChunks } from '../../core/formats/export/tensorboard';
import { RunStore } from '../store/runStore';
import importCommand from '../cli/commands/import';
import { testCliContext } from '../testing/testContext';
import { importSources, TB_BESIDE_TRACKERS } from './importSources';

let dir: string;
let store: RunStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-folder-mixed-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** One MLflow file-store run as MLflow's FileStore lays it out (meta.yaml, metrics/<key> lines "timestamp value step"). */
async function mlflowRun(root: string): Promise<void> {
  const run = join(root, 'mlruns', '1', 'a1b2c3');
  await mkdir(join(run, 'metrics', 'actor'), { recursive: true });
  await writeFile(join(root, 'mlruns', '1', 'meta.yaml'), 'experiment_id: "1"\nlifecycle_stage: active\nname: verl\n');
  await writeFile(
    join(run, 'meta.yaml'),
    'experiment_id: "1"\nlifecycle_stage: active\nrun_id: a1b2c3\nrun_name: grpo\nstart_time: 1733400000000\nstatus: 3\n',
  );
  await writeFile(join(run, 'metrics', 'actor', 'entropy'), '1733400000000 0.9 1\n1733400001000 0.8 2\n');
}

function eventFile(): Uint8Array {
  const parts = [
    ...tensorboardChunks(
      [1, 2].map((step) => ({ step, values: { 'actor/entropy': 1 - step / 10 } })),
      { keys: ['actor/entropy'], startWallTime: 1_733_400_000 },
    ),
  ];
  return Buffer.concat(parts);
}

describe('a folder of trackers’ runs and TensorBoard event files', () => {
  it('imports the trackers’ runs and counts the event files it left out', async () => {
    const out = join(dir, 'outputs');
    await mlflowRun(out);
    const tb = join(out, 'tensorboard_log', 'verl', 'grpo');
    await mkdir(tb, { recursive: true });
    await writeFile(join(tb, 'events.out.tfevents.1733400000.host.1.0'), eventFile());
    await writeFile(join(tb, 'events.out.tfevents.1733400100.host.1.0'), eventFile());
    const r = await importSources(store, [out]);
    expect(r.trackers).toEqual({ 'mlflow-file': 1 });
    expect(r.runIds).toHaveLength(1);
    expect(r.skipped).toEqual({ [TB_BESIDE_TRACKERS]: 2 });
    expect(TB_BESIDE_TRACKERS).toMatch(/import .* on its own/);
  });
});

describe('the same trackers’ folder imported twice', () => {
  it('the second import names the run that holds it and prints no empty "found" line', async () => {
    const out = join(dir, 'again');
    await mlflowRun(out);
    const data = join(dir, 'data-again');
    const first = testCliContext(data);
    expect(await importCommand.run([out], first.ctx)).toBe(0);
    expect(first.out()).toMatch(/\nfound 1 MLflow run\n$/);
    const second = testCliContext(data);
    expect(await importCommand.run([out], second.ctx)).toBe(1);
    expect(second.out()).toBe('');
    expect(second.err()).toMatch(/already imported as run \S+ \(same SHA-256\); pass --again/);
  });
});
