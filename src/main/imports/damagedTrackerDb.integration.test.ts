/**
 * A tracker's database that arrives damaged (cut short by a copy, a page overwritten): `arlarena import` and the
 * API's imports.path refuse it in one line naming the file, and the run store keeps exactly what it held. The
 * databases are MLflow's and Trackio's own (tests/peers/trackers_peer.py in the `trackers` venv), damaged here.
 * Before, SQLite's own error went out with its stack ("SqliteError: database disk image is malformed at
 * Database.prepare …"), naming no file. And an MLflow file store (MLflow's own, too) whose metric file was cut
 * mid-line: the torn line is counted, not read as a made-up value at step 0.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import { TRACKERS_PEER } from '../../../tests/support/trackersPeer';
import importCommand from '../cli/commands/import';
import { createImportsHandlers } from '../api/handlers/imports';
import { openHandlerTestLab } from '../testing/testLab';
import { testCliContext } from '../testing/testContext';
import { RunStore } from '../store/runStore';
import { openReadOnly } from './sqliteReadOnly';

let dir: string;
let mlflowDb: string;
let trackioDb: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'arl-damaged-db-'));
  execFileSync(venvPython('trackers'), [TRACKERS_PEER, 'write', dir, '--only', 'mlflow-sqlite,trackio,mlflow-file'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 170_000,
  });
  mlflowDb = join(dir, 'mlflow.db');
  const trackioDir = join(dir, 'trackio');
  trackioDb = join(
    trackioDir,
    readdirSync(trackioDir).find((f) => f.endsWith('.db'))!,
  );
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A copy of `src` cut to `bytes` (what an interrupted scp or a full disk leaves). */
function cutCopy(src: string, name: string, bytes: number): string {
  const p = join(dir, name);
  copyFileSync(src, p);
  truncateSync(p, bytes);
  return p;
}

/** A copy of the MLflow store whose `metrics` table's root page is overwritten: the scan (runs, experiments) reads fine, the steps do not. */
function metricsPageDamaged(name: string): string {
  const db = openReadOnly(mlflowDb);
  const { rootpage } = db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'metrics'").get() as { rootpage: number };
  const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
  db.close();
  const p = join(dir, name);
  copyFileSync(mlflowDb, p);
  const fd = openSync(p, 'r+');
  writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (rootpage - 1) * pageSize);
  closeSync(fd);
  return p;
}

/** Every run's id and the bytes of its metrics file: what "nothing lost, nothing added" compares. */
function storeContents(dataDir: string): Record<string, string> {
  const runs = join(dataDir, 'runs');
  const out: Record<string, string> = {};
  for (const id of readdirSync(runs)
    .filter((d) => !d.startsWith('.') && statSync(join(runs, d)).isDirectory())
    .sort())
    out[id] = readdirSync(join(runs, id))
      .filter((f) => f.startsWith('metrics'))
      .map((f) => readFileSync(join(runs, id, f), 'utf8'))
      .join('');
  return out;
}

const ONE_LINE = (path: string, kept: string) =>
  new RegExp(
    `^arlarena import: refused: ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} could not be read as a SQLite database \\(database disk image is malformed\\): .*Copy it again.*; ${kept}\\n$`,
  );

describe('a damaged tracker database', () => {
  it('cut short (MLflow and Trackio): one line naming the file, nothing imported, the store as it was', async () => {
    const data = join(dir, 'data-cut');
    const good = testCliContext(data);
    expect(await importCommand.run([mlflowDb], good.ctx)).toBe(0);
    const before = storeContents(data);
    expect(Object.keys(before).length).toBeGreaterThan(0);
    const cases = [
      cutCopy(mlflowDb, 'mlflow-header.db', 100),
      cutCopy(mlflowDb, 'mlflow-half.db', Math.floor(statSync(mlflowDb).size / 2)),
      cutCopy(trackioDb, 'trackio-third.db', Math.floor(statSync(trackioDb).size / 3)),
    ];
    for (const p of cases) {
      const c = testCliContext(data);
      expect(await importCommand.run([p], c.ctx)).toBe(1);
      expect(c.err()).toMatch(ONE_LINE(p, 'nothing was imported'));
      expect(c.out()).toBe('');
      expect(storeContents(data)).toEqual(before);
    }
  });

  it('damaged past what the scan reads: the run being read is removed, the runs read before it are named and kept', async () => {
    const data = join(dir, 'data-page');
    const bad = metricsPageDamaged('mlflow-page.db');
    const c = testCliContext(data);
    expect(await importCommand.run([bad], c.ctx)).toBe(1);
    expect(c.err()).toMatch(ONE_LINE(bad, 'nothing was imported'));
    expect(storeContents(data)).toEqual({});

    // The Trackio database first, then the damaged store: Trackio's runs are imported and named, MLflow's are not.
    const both = testCliContext(data);
    expect(await importCommand.run([trackioDb, bad], both.ctx)).toBe(1);
    const kept = Object.keys(storeContents(data));
    expect(kept.length).toBeGreaterThan(0);
    expect(both.err()).toMatch(
      ONE_LINE(bad, 'nothing of it was imported; the (\\d+ runs|run) read before it (were|was) imported \\(([^)]+)\\)'),
    );
    const named = /imported \(([^)]+)\)\n$/.exec(both.err())![1].split(', ');
    expect(named.sort()).toEqual(kept);
    const store = await RunStore.open(data);
    try {
      for (const r of await store.listRuns()) expect(r.tags).toContain('trackio');
    } finally {
      await store.close();
    }
  });

  it("an MLflow file store's metric file cut mid-line: the torn line is skipped and counted, not read as step 0", async () => {
    // MLflow's FileStore appends "timestamp value step\n" per value; a line without its newline is a write cut short
    // (a copy of a store still being written, a full disk). Its two fields ("1733… 0.") read as MLflow's legacy
    // step-less line made a value 0 at step 0 — for the entropy, a new baseline and a changed verdict.
    const copy = join(dir, 'mlruns-torn');
    cpSync(join(dir, 'mlruns'), copy, { recursive: true });
    const metric = readdirSync(copy, { recursive: true, encoding: 'utf8' })
      .map((f) => join(copy, f))
      .find((f) => /[\\/]metrics[\\/]/.test(f) && statSync(f).isFile() && readFileSync(f, 'utf8').trim().split('\n').length >= 3)!;
    const lines = readFileSync(metric, 'utf8').trim().split('\n');
    const [, , lastStep] = lines.at(-1)!.split(' ');
    // Cut inside the last line's value: "timestamp 0." stays, the step is gone.
    const cutAt = readFileSync(metric, 'utf8').lastIndexOf(' ') - 3;
    truncateSync(metric, cutAt);
    expect(readFileSync(metric, 'utf8').split('\n').at(-1)!.split(' ')).toHaveLength(2);

    const whole = testCliContext(join(dir, 'data-whole'));
    expect(await importCommand.run([join(dir, 'mlruns'), '--json'], whole.ctx)).toBe(0);
    const torn = testCliContext(join(dir, 'data-torn'));
    expect(await importCommand.run([copy, '--json'], torn.ctx)).toBe(0);
    const r = JSON.parse(torn.out()) as { runIds: string[]; skipped: Record<string, number> };
    expect(r.skipped).toEqual({ 'torn MLflow metric line at the end of a file (no newline: a write cut short)': 1 });

    // Every run's steps as the intact store's, but the torn value gone: no value at a step the line never had.
    const metricsOf = async (data: string): Promise<Map<string, Record<number, Record<string, number>>>> => {
      const store = await RunStore.open(data);
      try {
        const out = new Map<string, Record<number, Record<string, number>>>();
        for (const run of await store.listRuns()) {
          const steps: Record<number, Record<string, number>> = {};
          for (const m of await store.readMetrics(run.id)) steps[m.step] = { ...m.values };
          out.set(run.name, steps);
        }
        return out;
      } finally {
        await store.close();
      }
    };
    const want = await metricsOf(join(dir, 'data-whole'));
    const got = await metricsOf(join(dir, 'data-torn'));
    // mlruns/<experiment>/<run>/metrics/<key path>: the run's name is its meta.yaml's run_name.
    const [expId, runId, , ...keyPath] = metric.slice(copy.length + 1).split(/[\\/]/);
    const tornRun = /^run_name: (.*)$/m.exec(readFileSync(join(copy, expId, runId, 'meta.yaml'), 'utf8'))![1].trim();
    const key = keyPath.join('/');
    let changed = 0;
    for (const [name, steps] of want) {
      const g = got.get(name)!;
      expect(Object.keys(g).sort(), name).toEqual(Object.keys(steps).sort());
      for (const [step, values] of Object.entries(steps)) {
        const expected = { ...values };
        if (name === tornRun && step === lastStep && key in expected) {
          delete expected[key];
          changed++;
        }
        expect(g[Number(step)], `${name} step ${step}`).toEqual(expected);
      }
    }
    expect(changed).toBe(1);
  });

  it('over the API: VALIDATION naming the file, not INTERNAL', async () => {
    const lab = await openHandlerTestLab('arl-damaged-db-api-', (s) => createImportsHandlers(s), {
      transport: 'electron',
      publishDownload: null,
    });
    try {
      const p = cutCopy(mlflowDb, 'mlflow-api.db', 100);
      const r = await lab.call('imports.path', { path: p });
      expect(r.error).toMatchObject({
        code: 'VALIDATION',
        field: 'path',
        message: expect.stringMatching(/could not be read as a SQLite database/),
      });
      expect((r.error as { message: string }).message.startsWith(p)).toBe(true);
    } finally {
      await lab.close();
    }
  });
});
