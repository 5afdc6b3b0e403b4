/**
 * The MLflow SQLite reader against values MLflow's own client logged (tests/peers/trackers_peer.py mlflow-exact,
 * mlflow-skinny 3.18 in the `trackers` venv): SQLite groups a run's rows into steps and writes their values as
 * JSON (trackers.ts MLFLOW_STEPS_SQL), so every double must come back bit for bit, NaN and ±inf as MLflow stores
 * them (is_nan, ±DBL_MAX) but the double just below DBL_MAX finite, and a value logged twice at one step must be
 * the later one by timestamp even where that row was written first.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import type { SourceStep } from '../../core/formats/types';
import { scanTrackers } from './trackers';

const PEER = resolve(import.meta.dirname, '../../../tests/peers/trackers_peer.py');

let dir: string;
let want: { run_id: string; steps: Record<string, Record<string, number | string>> };

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'arl-mlflow-exact-'));
  const out = execFileSync(venvPython('trackers'), [PEER, 'mlflow-exact', join(dir, 'mlflow.db')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 110_000,
  });
  want = JSON.parse(out.trim().split('\n').at(-1) as string) as typeof want;
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const num = (v: number | string): number =>
  v === 'NaN' ? Number.NaN : v === 'Infinity' ? Number.POSITIVE_INFINITY : v === '-Infinity' ? Number.NEGATIVE_INFINITY : (v as number);

describe('MLflow SQLite store: exact values and the latest value of a step', () => {
  it('reads every logged double bit for bit, NaN / ±inf as logged, and the later of two values at one step', async () => {
    const runs = (await scanTrackers(join(dir, 'mlflow.db'))).runs;
    expect(runs.map((r) => r.info.id)).toEqual([want.run_id]);
    const steps: SourceStep[] = [];
    await runs[0].read({ add: (s) => steps.push(s), afterChunk: async () => undefined });
    expect(steps.map((s) => s.step)).toEqual(Object.keys(want.steps).map(Number));
    for (const s of steps) {
      const w = want.steps[String(s.step)];
      expect(Object.keys(s.values).sort(), `keys at step ${s.step}`).toEqual(Object.keys(w).sort());
      for (const [k, v] of Object.entries(w))
        expect(Object.is(s.values[k], num(v)), `${k} at step ${s.step}: ${s.values[k]} vs ${v}`).toBe(true);
    }
    expect(steps.find((s) => s.step === 20)?.values['exact/relogged']).toBe(2.5);
    expect(steps.find((s) => s.step === 40)?.values['exact/value']).toBe(1.7976931348623155e308);
  });
});
