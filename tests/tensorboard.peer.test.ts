/**
 * TensorBoard against TensorBoard itself: event files written by tensorboard's own EventFileWriter
 * are imported and every value compared; the lab's exported event files are read back with TensorBoard's own
 * EventAccumulator and every value compared; the real event files in ../shared/data/real-runs are checked
 * against their README and the run's trainer_state.json.
 *
 * The peer python comes from the project's venv (tests/support/peers.ts): when it is missing these tests fail
 * with the set-up command, they never skip. Each python start costs about a second, so each test batches its
 * work into one call of tests/peers/tensorboard_peer.py.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLineParser } from '../src/core/formats/index';
import { createTensorboardParser } from '../src/core/formats/tensorboard';
import type { LogFormat, SourceStep } from '../src/core/formats/types';
import exportCommand from '../src/main/cli/commands/export';
import { importLogs } from '../src/main/imports/importLogs';
import { RunStore } from '../src/main/store/runStore';
import { writeSyntheticRun } from '../src/main/store/synthetic';
import type { MetricRecord } from '../src/shared/metrics';
import { peerPython } from './support/peers';
import { describeRealRuns } from './support/realRuns';
import { testCliContext } from '../src/main/testing/testContext';

const PEER = resolve(import.meta.dirname, 'peers', 'tensorboard_peer.py');

function peer(args: string[]): string {
  return execFileSync(peerPython(), [PEER, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

/** Python reprs from the peer's `read` → numbers ('nan', 'inf', '-inf' included). */
function pyNumber(repr: string): number {
  if (repr === 'nan') return Number.NaN;
  if (repr === 'inf') return Number.POSITIVE_INFINITY;
  if (repr === '-inf') return Number.NEGATIVE_INFINITY;
  return Number(repr);
}

async function parseFile(path: string, chunk = 4096) {
  const bytes = new Uint8Array(await readFile(path));
  const steps: SourceStep[] = [];
  const p = createTensorboardParser((s) => steps.push(s));
  for (let i = 0; i < bytes.length; i += chunk) p.push(bytes.subarray(i, i + chunk));
  p.end();
  return { steps, p };
}

async function eventFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.includes('tfevents')) out.push(join(e.parentPath, e.name));
  }
  return out.sort();
}

/** A number for (run, step, tag) that is not round in float32, so rounding mistakes show. */
const valueAt = (run: number, step: number, tag: number): number => Math.sin(run * 1000 + step * 37 + tag * 11) * 10 ** ((tag % 5) - 2);

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'arl-tb-peer-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("files written by TensorBoard's own writer", () => {
  it('imports simple_value and scalar-tensor runs in a folder tree with every value as written', async () => {
    const root = join(tmp, 'writer');
    type Kind = 'simple' | 'tensor_f32' | 'tensor_f64' | 'tensor_f16' | 'tensor_i32' | 'tensor_i64' | 'content_f32';
    // What the importer must read for each kind: float32 kinds rounded as TensorBoard stores them.
    const readAs: Record<Kind, (v: number) => number> = {
      simple: Math.fround,
      tensor_f32: Math.fround,
      content_f32: Math.fround,
      tensor_f64: (v) => v,
      tensor_f16: (v) => v,
      tensor_i32: (v) => v,
      tensor_i64: (v) => v,
    };
    const expected = new Map<string, Map<number, Record<string, number>>>();
    const files: { dir: string; events: [number, number, [string, string, unknown][]][] }[] = [];
    const addRun = (dir: string, events: [number, number, [string, string, unknown][]][], want: Map<number, Record<string, number>>) => {
      files.push({ dir, events });
      expected.set(dir, want);
    };

    // Run A: simple_value scalars, one Event per scalar as PyTorch's SummaryWriter writes, NaN and ±inf included,
    // plus a text summary at step 0.
    {
      const events: [number, number, [string, string, unknown][]][] = [[0, 1.7e9, [['notes', 'text', 'hello from the writer']]]];
      const want = new Map<number, Record<string, number>>();
      for (let step = 1; step <= 30; step++) {
        const row: Record<string, number> = {};
        for (const [t, tag] of ['train/loss', 'train/reward', 'train/entropy'].entries()) {
          const v =
            step === 13 && t === 0
              ? Number.NaN
              : step === 14 && t === 1
                ? Number.POSITIVE_INFINITY
                : step === 15 && t === 1
                  ? Number.NEGATIVE_INFINITY
                  : valueAt(1, step, t);
          events.push([
            step,
            1.7e9 + step,
            [[tag, 'simple', Number.isFinite(v) ? v : String(v).replace('Infinity', 'inf').replace('NaN', 'nan')]],
          ]);
          row[tag] = Math.fround(v);
        }
        want.set(step, row);
      }
      addRun(join(root, 'runA'), events, want);
    }
    // Run B: rank-0 tensor summaries with the scalars plugin (tensorboard's tensor_util), every dtype, all tags of
    // a step in one Event as tf.summary writes them, plus histograms and images that are not metrics.
    {
      const kinds: Kind[] = ['tensor_f32', 'tensor_f64', 'tensor_f16', 'tensor_i32', 'tensor_i64', 'content_f32'];
      const events: [number, number, [string, string, unknown][]][] = [];
      const want = new Map<number, Record<string, number>>();
      for (let step = 0; step < 20; step++) {
        const values: [string, string, unknown][] = [];
        const row: Record<string, number> = {};
        for (const [t, kind] of kinds.entries()) {
          const v =
            kind === 'tensor_f16'
              ? (step - 10) / 4
              : kind === 'tensor_i32'
                ? step * 1000 - 7
                : kind === 'tensor_i64'
                  ? 2 ** 40 + step
                  : valueAt(2, step, t);
          values.push([`b/${kind}`, kind, v]);
          row[`b/${kind}`] = readAs[kind](v);
        }
        if (step % 5 === 0) {
          values.push(
            ['b/weights', 'histogram', [step, step + 1, step + 2]],
            ['b/old_weights', 'legacy_histogram', [1, 2, 3]],
            ['b/picture', 'image', 'png-bytes'],
          );
        }
        events.push([step, 1.7e9 + step, values]);
        want.set(step, row);
      }
      addRun(join(root, 'group', 'runB'), events, want);
    }
    // Run C: a writer that interleaves — the eval tag for step N arrives after step N+1 began.
    {
      const events: [number, number, [string, string, unknown][]][] = [];
      const want = new Map<number, Record<string, number>>();
      for (let step = 0; step < 10; step++) {
        events.push([step, 1.7e9 + step, [['c/train', 'simple', valueAt(3, step, 0)]]]);
        if (step > 0) events.push([step - 1, 1.7e9 + step, [['c/eval', 'simple', valueAt(3, step - 1, 1)]]]);
        want.set(step, {
          'c/train': Math.fround(valueAt(3, step, 0)),
          ...(step < 9 ? { 'c/eval': Math.fround(valueAt(3, step, 1)) } : {}),
        });
      }
      addRun(join(root, 'group', 'runC'), events, want);
    }

    const spec = join(tmp, 'spec.json');
    await writeFile(spec, JSON.stringify({ files }));
    const written = JSON.parse(peer(['write', spec])) as string[];
    expect(written).toHaveLength(3);

    for (const file of written) {
      const dir = resolve(file, '..');
      const want = expected.get(dir);
      expect(want, `expected values for ${dir}`).toBeDefined();
      const { steps, p } = await parseFile(file, 1000);
      expect(p.skipped, file).toEqual({});
      expect(
        steps.map((s) => s.step),
        file,
      ).toEqual([...want!.keys()]);
      for (const s of steps) expect(s.values, `${file} step ${s.step}`).toEqual(want!.get(s.step));
      expect(p.meta.notes[0]).toBe('file version brain.Event:2');
    }
    const notesOf = async (dir: string) => (await parseFile((await eventFiles(dir))[0])).p.meta.notes;
    expect(await notesOf(join(root, 'runA'))).toContain('non-scalar summaries ignored: text 1');
    expect(await notesOf(join(root, 'group', 'runB'))).toContain('non-scalar summaries ignored: histograms 4, histogram 4, image 4');

    // The folder tree through the real import path: one run per folder, as TensorBoard groups them.
    const store = await RunStore.open(join(tmp, 'store-writer'));
    try {
      const r = await importLogs(store, [root]);
      expect(r.format).toBe('tensorboard');
      expect(r.runIds).toHaveLength(3);
      expect(r.steps).toBe(30 + 20 + 10);
    } finally {
      await store.close();
    }
  });
});

describeRealRuns('real TensorBoard event files', (dir) => {
  const tb = join(dir, 'tensorboard');

  it('2a (TRL GRPO, Qwen2-0.5B): 149 records, steps 10..110 and 113, equal to trainer_state.json in float32', async () => {
    const run = join(tb, 'trl-grpo_qwen2-0.5b_numinamath');
    const [file] = await eventFiles(join(run, 'runs'));
    const { steps, p } = await parseFile(file, 777);
    expect(p.records).toBe(149);
    expect(p.skipped).toEqual({});
    expect(steps.map((s) => s.step)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 113]);
    expect(Object.keys(steps[0].values).sort()).toEqual([
      'train/clip_ratio',
      'train/completion_length',
      'train/epoch',
      'train/grad_norm',
      'train/kl',
      'train/learning_rate',
      'train/loss',
      'train/num_tokens',
      'train/reward',
      'train/reward_std',
      'train/rewards/accuracy_reward',
      'train/rewards/format_reward',
    ]);
    expect(Object.keys(steps[11].values)).toContain('train/train_runtime');
    expect(p.meta.framework).toBe('trl');
    expect((p.meta.config?.args as Record<string, unknown>).logging_steps).toBe(10);

    // The HF Trainer wrote the same numbers to TensorBoard (as float32) and to log_history (as doubles).
    const state = JSON.parse(await readFile(join(run, 'checkpoint-113_trainer_state.json'), 'utf8')) as {
      log_history: Record<string, number>[];
    };
    expect(state.log_history).toHaveLength(11);
    const byStep = new Map(steps.map((s) => [s.step, s.values]));
    let compared = 0;
    for (const entry of state.log_history) {
      const tbValues = byStep.get(entry.step);
      expect(tbValues, `step ${entry.step}`).toBeDefined();
      for (const [k, v] of Object.entries(entry)) {
        if (k === 'step') continue;
        expect(tbValues![`train/${k}`], `step ${entry.step} ${k}`).toBe(Math.fround(v));
        compared++;
      }
    }
    expect(compared).toBe(11 * 12);
    // README: reward 0.018 (step 10) → 0.110 (step 110) → 0.104 (step 113).
    expect(byStep.get(10)!['train/reward']).toBeCloseTo(0.018, 3);
    expect(byStep.get(110)!['train/reward']).toBeCloseTo(0.11, 3);
    expect(byStep.get(113)!['train/reward']).toBeCloseTo(0.104, 3);
  });

  it('2b: the two aborted launches hold no scalars; the 18-14-56 run has 48 tags at 10, 20, 30 and its collapse', async () => {
    const files = await eventFiles(join(tb, 'trl-grpo-dapo_qwen2.5-vl-3b', 'runs'));
    expect(files).toHaveLength(3);
    const byDir = new Map<string, Awaited<ReturnType<typeof parseFile>>>();
    for (const f of files) byDir.set(f.split('/').slice(-2)[0].slice(0, 14), await parseFile(f, 513));
    for (const aborted of ['Oct22_17-50-33', 'Oct22_18-12-59']) {
      const r = byDir.get(aborted)!;
      expect(r.steps, aborted).toEqual([]);
      expect(r.p.records, aborted).toBe(3);
      expect(r.p.skipped, aborted).toEqual({});
      expect(r.p.meta.notes, aborted).toContain('non-scalar summaries ignored: text 2');
    }
    const { steps, p } = byDir.get('Oct22_18-14-56')!;
    expect(p.records).toBe(147);
    expect(p.skipped).toEqual({});
    expect(steps.map((s) => s.step)).toEqual([10, 20, 30]);
    for (const s of steps) expect(Object.keys(s.values), `step ${s.step}`).toHaveLength(48);
    const at = (step: number, tag: string) => steps.find((s) => s.step === step)!.values[tag];
    // README 2b health: entropy 1.028 → 0.0085, grad norm 0.302 → 0, loss −0.045 → 0, clipped ratio 0.297 →
    // 0.995, mean length 142.7 → 255.8, think-format reward 0.575 → 0, reward 1.875 → 0.494 → 0.925.
    expect(at(10, 'train/entropy')).toBeCloseTo(1.028, 3);
    expect(at(30, 'train/entropy')).toBeCloseTo(0.0085, 4);
    expect(at(10, 'train/grad_norm')).toBeCloseTo(0.302, 3);
    expect(at(30, 'train/grad_norm')).toBe(0);
    expect(at(10, 'train/loss')).toBeCloseTo(-0.045, 3);
    expect(at(30, 'train/loss')).toBe(0);
    expect(at(10, 'train/completions/clipped_ratio')).toBeCloseTo(0.297, 3);
    expect(at(30, 'train/completions/clipped_ratio')).toBeCloseTo(0.995, 3);
    expect(at(10, 'train/completions/mean_length')).toBeCloseTo(142.7, 1);
    expect(at(30, 'train/completions/mean_length')).toBeCloseTo(255.8, 1);
    expect(at(10, 'train/rewards/think_format_reward/mean')).toBeCloseTo(0.575, 3);
    expect(at(30, 'train/rewards/think_format_reward/mean')).toBe(0);
    expect(at(10, 'train/reward')).toBeCloseTo(1.875, 3);
    expect(at(20, 'train/reward')).toBeCloseTo(0.494, 3);
    expect(at(30, 'train/reward')).toBeCloseTo(0.925, 3);
  });
});

describe("round trip: lab run → arlarena export → TensorBoard's EventAccumulator / the lab's importers", () => {
  it('every exported value reads back exactly (float32 for TensorBoard, doubles for csv and jsonl)', async () => {
    const dataDir = join(tmp, 'store-roundtrip');
    const store = await RunStore.open(dataDir);
    let records: MetricRecord[];
    let runId: string;
    try {
      // A collapsing synthetic lab run with a NaN step, plus one step of infinities.
      const run = await writeSyntheticRun(store, { steps: 120, seed: 5, shape: 'cispo_collapse', collapseAt: 60, nanAt: 100 });
      runId = run.id;
      const last = (await store.readMetrics(run.id)).at(-1)!.step;
      await store.appendMetrics(run.id, [
        {
          step: last + 1,
          values: { 'actor/grad_norm': Number.POSITIVE_INFINITY, 'actor/pg_loss': Number.NEGATIVE_INFINITY, 'actor/entropy': 0.1 },
        },
      ]);
      await store.flush(run.id);
      records = await store.readMetrics(run.id);
    } finally {
      await store.close();
    }
    expect(records.length).toBe(121);
    const live = new Set<string>();
    for (const r of records) for (const [k, v] of Object.entries(r.values)) if (!Number.isNaN(v)) live.add(k);
    expect(live.size).toBeGreaterThan(10);
    expect(records.some((r) => Object.entries(r.values).some(([k, v]) => live.has(k) && Number.isNaN(v)))).toBe(true);

    const outs: Record<string, string> = {};
    for (const format of ['tensorboard', 'csv', 'jsonl']) {
      const out = join(tmp, `export-${format}`, format === 'tensorboard' ? 'logdir' : `run.${format}`);
      const c = testCliContext(dataDir);
      const code = await exportCommand.run([runId, '--format', format, '--out', out, '--json'], c.ctx);
      expect(code, c.err()).toBe(0);
      const res = JSON.parse(c.out()) as { path: string; steps: number; keys: number; format: string };
      expect(res).toMatchObject({ format, steps: 121, keys: live.size });
      outs[format] = res.path;
    }
    expect(outs.tensorboard).toMatch(/logdir\/events\.out\.tfevents\.\d+\.arlarena\./);

    // TensorBoard's own reader: every (tag, step) the run has, and nothing else, with TensorBoard's float32 value.
    const read = JSON.parse(peer(['read', outs.tensorboard])) as Record<string, Record<string, [number, string][]>>;
    const tags = read[outs.tensorboard];
    expect(Object.keys(tags).sort()).toEqual([...live].sort());
    let compared = 0;
    for (const key of live) {
      const want = records.filter((r) => r.values[key] !== undefined).map((r) => [r.step, Math.fround(r.values[key])]);
      const got = tags[key].map(([step, v]) => [step, pyNumber(v)]);
      expect(got, key).toEqual(want);
      compared += got.length;
    }
    expect(compared).toBeGreaterThan(1000);

    // csv and jsonl re-import through the lab's own parsers to the same doubles.
    const reimport = async (format: LogFormat, path: string) => {
      const steps: SourceStep[] = [];
      const p = createLineParser(format, (s) => steps.push(s));
      for (const line of (await readFile(path, 'utf8')).split('\n')) if (line !== '') p.push(line);
      p.end();
      expect(p.skipped, format).toEqual({});
      return steps;
    };
    const want = records.map((r) => ({ step: r.step, values: Object.fromEntries(Object.entries(r.values).filter(([k]) => live.has(k))) }));
    for (const [format, path] of [
      ['csv', outs.csv],
      ['verl-jsonl', outs.jsonl],
    ] as const) {
      const back = await reimport(format, path);
      expect(
        back.map((s) => ({ step: s.step, values: s.values })),
        format,
      ).toEqual(want);
    }
  });

  it('refuses an unknown --format with the formats it knows, and writes nothing', async () => {
    const c = testCliContext(join(tmp, 'store-none'));
    await expect(exportCommand.run(['some-run', '--format', 'parquet'], c.ctx)).rejects.toThrow(
      /unknown --format "parquet"; known: bundle, tensorboard, csv, jsonl/,
    );
  });
});
