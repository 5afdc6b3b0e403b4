/**
 * A lab run exported to W&B and MLflow, read back by the trackers' own Python code (the `trackers` venv:
 * W&B's protobuf classes for the .wandb records and `wandb beta sync --dry-run` for the folder; MLflow's
 * MlflowClient on a file store), then imported again by the lab: the same steps and values, NaN and ±inf kept.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import type { MetricRecord } from '../../shared/metrics';
import { RunStore } from '../store/runStore';
import { exportToTracker } from './exportTrackers';
import { importTrackerRuns } from './importTrackers';
import { scanTrackers } from './trackers';

const PEER = resolve(import.meta.dirname, '../../../tests/peers/trackers_peer.py');
let dir: string;
let store: RunStore;
let runId: string;

// A lab-shaped run: catalog keys, a NaN-only key (left out of exports), a real NaN and ±inf, a key with '@'.
const records: MetricRecord[] = Array.from({ length: 30 }, (_, i) => ({
  step: i + 1,
  values: {
    'actor/pg_loss': i === 5 ? Number.NaN : 0.5 / (i + 1),
    'actor/entropy': 1.25 - i * 0.01,
    'actor/grad_norm': i === 6 ? Number.POSITIVE_INFINITY : i === 7 ? Number.NEGATIVE_INFINITY : 1e-7 * (i + 1),
    'episode/success_rate': i / 30,
    'val/score_mean': Number.NaN,
    'val-aux/gsm8k/reward/best@4': 0.1 + i / 100,
  },
}));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'arl-trexport-'));
  store = await RunStore.open(join(dir, 'data'));
  const rec = await store.createRun({
    name: 'sampo run',
    tags: ['lab'],
    preset: 'sampo',
    env: 'sokoban',
    seed: 3,
    config: { algorithm: { name: 'sampo', clip: { low: 0.2, high: 0.28 } }, seed: 3, steps: 30, note: null, useKl: false },
    totalSteps: 30,
  });
  await store.appendMetrics(rec.id, records);
  await store.flush(rec.id);
  await store.updateRun(rec.id, { status: 'completed', finishedAt: new Date().toISOString() });
  runId = rec.id;
});

afterAll(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function enc(v: number): number | string {
  return Number.isNaN(v) ? 'NaN' : v === Infinity ? 'Infinity' : v === -Infinity ? '-Infinity' : v;
}

const EXPORTED = ['actor/pg_loss', 'actor/entropy', 'actor/grad_norm', 'episode/success_rate', 'val-aux/gsm8k/reward/best@4'];

async function reimported(path: string): Promise<MetricRecord[]> {
  const s2 = await RunStore.open(join(dir, `re-${Math.abs(path.length)}-${readdirSync(dir).length}`));
  try {
    const out = await importTrackerRuns(s2, (await scanTrackers(path)).runs);
    expect(out.runIds.length).toBe(1);
    return await s2.readMetrics(out.runIds[0]);
  } finally {
    await s2.close();
  }
}

function expectSameRecords(got: readonly MetricRecord[]): void {
  expect(got.map((r) => r.step)).toEqual(records.map((r) => r.step));
  for (const [i, r] of records.entries())
    for (const k of EXPORTED) expect(enc(got[i].values[k]), `${r.step} ${k}`).toEqual(enc(r.values[k]));
}

describe('export to W&B', () => {
  it("W&B's own Record classes read every step back; wandb beta sync lists the run; importing it gives the same run", async () => {
    const out = join(dir, 'wandb');
    const res = await exportToTracker(store, runId, { format: 'wandb', out });
    const file = join(res.path, `run-${res.trackerId}.wandb`);
    const got = JSON.parse(execFileSync(venvPython('trackers'), [PEER, 'read-wandb', file], { encoding: 'utf8', timeout: 120_000 })) as {
      run: { id: string; name: string; project: string; tags: string[] };
      config: Record<string, unknown>;
      history: { step: number; values: Record<string, number | string> }[];
      summary: Record<string, number | string>;
      exit_code: number;
      bad_crc: number;
      dry_run: string;
    };
    expect(got.bad_crc).toBe(0);
    expect(got.run).toMatchObject({ id: res.trackerId, name: 'sampo run', project: 'arlarena', tags: ['lab'] });
    expect(got.config).toEqual({
      algorithm: { name: 'sampo', clip: { low: 0.2, high: 0.28 } },
      seed: 3,
      steps: 30,
      note: null,
      useKl: false,
    });
    expect(got.exit_code).toBe(0);
    expect(got.history.map((h) => h.step)).toEqual(records.map((r) => r.step));
    for (const [i, r] of records.entries()) {
      expect(Object.keys(got.history[i].values).sort()).toEqual([...EXPORTED].sort());
      for (const k of EXPORTED) expect(got.history[i].values[k]).toEqual(enc(r.values[k]));
    }
    expect(got.summary['actor/entropy']).toBe(records[29].values['actor/entropy']);
    expect(got.dry_run).toContain(`run-${res.trackerId}.wandb`);
    expectSameRecords(await reimported(out));
    await expect(exportToTracker(store, runId, { format: 'wandb', out })).rejects.toThrow(/already exists/);
  });
});

describe('export to MLflow (file store)', () => {
  it("MLflow's client reads the run back value for value; importing it gives the same run", async () => {
    const out = join(dir, 'mlruns');
    const res = await exportToTracker(store, runId, { format: 'mlflow', out });
    const got = JSON.parse(
      execFileSync(venvPython('trackers'), [PEER, 'read-mlflow', `file://${out}`], { encoding: 'utf8', timeout: 120_000 }),
    ) as {
      runs: {
        id: string;
        name: string;
        experiment: string;
        status: string;
        params: Record<string, string>;
        tags: Record<string, string>;
        metrics: Record<string, [number, number | string][]>;
      }[];
    };
    expect(got.runs.length).toBe(1);
    const r = got.runs[0];
    expect(r).toMatchObject({ id: res.trackerId, name: 'sampo run', experiment: 'arlarena', status: 'FINISHED' });
    expect(r.params).toMatchObject({ 'algorithm/name': 'sampo', 'algorithm/clip/low': '0.2', seed: '3', note: 'None', useKl: 'False' });
    expect(r.tags['arlarena.run_id']).toBe(runId);
    expect(Object.keys(r.metrics).sort()).toEqual(EXPORTED.map((k) => k.replace('@', '_at_')).sort());
    for (const k of EXPORTED) {
      expect(r.metrics[k.replace('@', '_at_')]).toEqual(records.map((x) => [x.step, enc(x.values[k])]));
    }
    expectSameRecords(await reimported(out));
    // A second run into the same store reuses the experiment.
    await expect(exportToTracker(store, runId, { format: 'mlflow', out })).rejects.toThrow(/already exists/);
  });
});
