/**
 * A run folder of a W&B client before 0.10 (wandb-history.jsonl, wandb-summary.json, config.yaml,
 * wandb-metadata.json; no .wandb file) is found by content and imported as one W&B run with its config. This fast
 * test writes the folder itself, in the layout wandb 0.9.7 writes (history rows as its json.dumps writes them,
 * config.yaml in PyYAML's block style); wandbOldSdk.integration.test.ts reads folders wandb 0.9.7 itself wrote.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';
import { importSources } from './importSources';
import { scanTrackers } from './trackers';
import { MAX_RECORD_DEPTH, MAX_RECORD_KEYS, MAX_RUN_KEYS, SKIP_KEYS_PAST_RUN_LIMIT } from '../../core/formats/steps';

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-wandb-old-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const CONFIG = `wandb_version: 1

_wandb:
  desc: null
  value:
    cli_version: 0.9.7
    is_jupyter_run: false
algorithm:
  desc: null
  value:
    adv_estimator: grpo
data:
  desc: null
  value:
    train_files:
    - ~/data/gsm8k/train.parquet
    train_batch_size: 256
`;

function historyLine(step: number): string {
  const grad = step === 3 ? 'NaN' : step === 4 ? 'Infinity' : String(1 + 0.1 * step);
  return `{"actor/pg_loss": ${0.5 / (1 + step)}, "actor/grad_norm": ${grad}, "timing": {"gen": ${1.5 + step}}, "note": "text", "_runtime": ${2 + step}, "_timestamp": ${1577836800 + step}, "_step": ${step}}`;
}

/** wandb/run-20200101_120000-old1abcd/ in the old layout, 10 history rows; returns the wandb/ folder. */
async function oldFolder(opts: { state?: string; exitcode?: number } = {}): Promise<string> {
  const root = join(dir, 'wandb');
  const run = join(root, 'run-20200101_120000-old1abcd');
  await mkdir(run, { recursive: true });
  await writeFile(join(run, 'wandb-history.jsonl'), `${Array.from({ length: 10 }, (_, s) => historyLine(s)).join('\n')}\n`);
  await writeFile(join(run, 'wandb-summary.json'), '{"actor/pg_loss": 0.05, "final": {"score": 0.75}, "_step": 9, "_runtime": 11}');
  await writeFile(join(run, 'config.yaml'), CONFIG);
  await writeFile(
    join(run, 'wandb-metadata.json'),
    JSON.stringify({
      name: 'grpo-old',
      project: 'arl-old',
      startedAt: '2020-01-01T12:00:00.250000',
      state: opts.state ?? 'finished',
      ...(opts.exitcode !== undefined ? { exitcode: opts.exitcode } : {}),
    }),
  );
  await writeFile(join(run, 'output.log'), 'step 0\nstep 1\n');
  return root;
}

describe("an older W&B client's run folder (written here in wandb 0.9.7's layout)", () => {
  it('is found by content as one W&B run, with its name, project, start time and how it ended', async () => {
    const root = await oldFolder({ state: 'failed', exitcode: 1 });
    const scan = await scanTrackers(root);
    expect(scan.runs).toHaveLength(1);
    const run = scan.runs[0];
    expect(run.format).toBe('wandb-files');
    expect(run.label).toBe('grpo-old');
    expect(run.info).toMatchObject({
      tracker: 'wandb',
      id: 'old1abcd',
      name: 'grpo-old',
      project: 'arl-old',
      startTime: '2020-01-01T12:00:00.250Z',
      state: 'failed',
      exitCode: 1,
    });
    // The run folder's own files are its (output.log too), not left over as unknown files.
    expect(scan.others).toEqual([]);
  });

  it('imports every row with its values (NaN and +inf kept, nested keys as a.b), its config and summary', async () => {
    const root = await oldFolder();
    const r = await importSources(store, [root]);
    expect(r.trackers).toEqual({ 'wandb-files': 1 });
    expect(r.runIds).toHaveLength(1);
    expect(r.steps).toBe(10);
    const rec = (await store.getRun(r.runIds[0]))!;
    expect(rec.name).toBe('grpo-old');
    expect(rec.tags).toEqual(expect.arrayContaining(['wandb', 'project:arl-old']));
    expect(rec.config).toEqual({
      algorithm: { adv_estimator: 'grpo' },
      data: { train_files: ['~/data/gsm8k/train.parquet'], train_batch_size: 256 },
    });
    expect(rec.source?.format).toBe('wandb-files');
    expect(rec.source?.notes.join('\n')).toMatch(/older W&B client's run folder/);
    expect(rec.source?.notes.join('\n')).toMatch(/summary: actor\/pg_loss=0\.05, final\.score=0\.75/);
    const metrics = await store.readMetrics(r.runIds[0]);
    expect(metrics.map((m) => m.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const byStep = new Map(metrics.map((m) => [m.step, m.values]));
    expect(byStep.get(3)!['actor/grad_norm']).toBeNaN();
    expect(byStep.get(4)!['actor/grad_norm']).toBe(Number.POSITIVE_INFINITY);
    expect(byStep.get(5)!['actor/grad_norm']).toBeCloseTo(1.5, 12);
    expect(byStep.get(2)!['actor/pg_loss']).toBeCloseTo(0.5 / 3, 12);
    expect(byStep.get(2)!['timing.gen']).toBe(3.5);
    expect(byStep.get(2)!._runtime).toBe(4);
    // The same folder again is the same W&B run from the same files.
    const again = await importSources(store, [root]);
    expect(again.runIds).toEqual([]);
    expect(again.duplicateOf).toEqual(r.runIds);
  });

  it('a history row nested 20,000 deep or with over 10,000 values is skipped and counted, the others imported', async () => {
    const root = await oldFolder();
    const file = join(root, 'run-20200101_120000-old1abcd', 'wandb-history.jsonl');
    const deep = `{"_step": 10, "x": ${'{"a": '.repeat(20_000)}1${'}'.repeat(20_000)}}`;
    const wide = `{"_step": 11, ${Array.from({ length: MAX_RECORD_KEYS + 1 }, (_, i) => `"k${i}": ${i}`).join(', ')}}`;
    await writeFile(file, `${Array.from({ length: 10 }, (_, s) => historyLine(s)).join('\n')}\n${deep}\n${wide}\n${historyLine(12)}\n`);
    const r = await importSources(store, [root]);
    expect(r.steps).toBe(11);
    const rec = (await store.getRun(r.runIds[0]))!;
    expect(rec.source?.skipped).toEqual({
      [`record nested deeper than ${MAX_RECORD_DEPTH} levels`]: 1,
      [`record with more than ${MAX_RECORD_KEYS} values`]: 1,
    });
    expect((await store.readMetrics(r.runIds[0])).map((m) => m.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12]);
  });

  it("a run's first 10,000 distinct keys are kept; later new keys' values are left out and counted", async () => {
    const root = await oldFolder();
    const file = join(root, 'run-20200101_120000-old1abcd', 'wandb-history.jsonl');
    const fresh = (step: number) =>
      `{"_step": ${step}, ${Array.from({ length: 6_000 }, (_, i) => `"s${step}_${i}": ${i}`).join(', ')}, "actor/pg_loss": 0.5}`;
    await writeFile(file, `${Array.from({ length: 10 }, (_, s) => historyLine(s)).join('\n')}\n${fresh(10)}\n${fresh(11)}\n`);
    const r = await importSources(store, [root]);
    expect(r.steps).toBe(12);
    // Rows 0-9 carry 4 numeric keys (actor/pg_loss, actor/grad_norm, timing.gen, _runtime); rows 10 and 11 offer
    // 12,000 more: 2,004 past the bound.
    expect((await store.getRun(r.runIds[0]))!.source?.skipped).toEqual({ [SKIP_KEYS_PAST_RUN_LIMIT]: 4 + 12_000 - MAX_RUN_KEYS });
    const last = (await store.readMetrics(r.runIds[0])).at(-1)!;
    expect(last.values['actor/pg_loss']).toBe(0.5);
  });

  it('names at most 10,000 non-numeric keys of a run in its notes (each row bringing new ones kept every name)', async () => {
    const root = await oldFolder();
    const file = join(root, 'run-20200101_120000-old1abcd', 'wandb-history.jsonl');
    const texts = (step: number) =>
      `{"_step": ${step}, "_runtime": 1, ${Array.from({ length: 6_000 }, (_, i) => `"t${step}_${i}": "x"`).join(', ')}, "actor/pg_loss": 0.5}`;
    await writeFile(file, `${texts(0)}\n${texts(1)}\n`);
    const r = await importSources(store, [root]);
    expect(r.steps).toBe(2);
    expect((await store.getRun(r.runIds[0]))!.source?.notes).toContain(
      `more than ${MAX_RUN_KEYS} non-numeric history key(s) ignored (strings, lists, booleans, media): t0_0, t0_1, t0_2, t0_3, t0_4, …`,
    );
  });

  it('a history file on its own is still a flat JSONL stream, and a folder without config.yaml is no W&B run', async () => {
    const root = await oldFolder();
    const run = join(root, 'run-20200101_120000-old1abcd');
    const alone = await importSources(store, [join(run, 'wandb-history.jsonl')]);
    expect(alone.trackers).toBeUndefined();
    expect(alone.format).toBe('jsonl');
    expect(alone.steps).toBe(10);
    await rm(join(run, 'config.yaml'));
    expect((await scanTrackers(root)).runs).toEqual([]);
  });
  it('files uploaded together (a picked folder) are recorded by the names the user picked, not the temporary copies', async () => {
    const root = await oldFolder();
    const run = join(root, 'run-20200101_120000-old1abcd');
    const picked = (f: string) => `job/wandb/run-20200101_120000-old1abcd/${f}`;
    const names = ['wandb-history.jsonl', 'config.yaml', 'wandb-summary.json', 'wandb-metadata.json', 'output.log'];
    const r = await importSources(store, [root], { uploadedFiles: Object.fromEntries(names.map((f) => [join(run, f), picked(f)])) });
    const rec = (await store.getRun(r.runIds[0]))!;
    expect(rec.source?.paths).toEqual(['wandb-history.jsonl', 'config.yaml', 'wandb-summary.json', 'wandb-metadata.json'].map(picked));
    expect(rec.source?.notes).toContain('uploaded through the app');
    expect(rec.source?.sha256).toHaveLength(4);
  });
});
