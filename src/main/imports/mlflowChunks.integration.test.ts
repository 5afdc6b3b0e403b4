/**
 * The MLflow SQLite reader's chunks (trackers.ts MLFLOW_STEPS_PROGRAM) against the single query, on runs MLflow's own
 * client logged (tests/peers/trackers_peer.py mlflow-order, mlflow-skinny 3.18 in the `trackers` venv) with rows in
 * the orders the chunks must handle: a step split between chunks, a step with more rows than a chunk, a value
 * logged twice at one step (later timestamp written first), two runs whose rows interleave, a run logged all at
 * one step, and a resumed run that logs steps again (out of order: read again by the single query). Every chunk
 * size must give the single query's step rows exactly, and an import must store the same metrics and records
 * whatever the chunk size.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import { RunStore } from '../store/runStore';
import { METRICS_FILE } from '../store/runFiles';
import { importTrackerRuns } from './importTrackers';
import { openReadOnly } from './sqliteReadOnly';
import { sqliteAside } from './sqliteRowsAside';
import { MLFLOW_STEPS_PROGRAM, mlflowStepRows, scanTrackers } from './trackers';

const PEER = resolve(import.meta.dirname, '../../../tests/peers/trackers_peer.py');

let dir: string;
let db: string;
let ids: Record<string, string>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'arl-mlflow-order-'));
  db = join(dir, 'mlflow.db');
  const out = execFileSync(venvPython('trackers'), [PEER, 'mlflow-order', db], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 110_000,
  });
  ids = JSON.parse(out.trim().split('\n').at(-1) as string) as Record<string, string>;
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * The step rows (step, latest timestamp, values JSON, rows, first rowid) and how often they came again: with a
 * chunk size, read in chunks on the reading thread; without, by the single query on this thread.
 */
async function read(run: string, chunkRows?: number): Promise<{ rows: unknown[][]; again: number }> {
  const conn = openReadOnly(db);
  let rows: unknown[][] = [];
  let again = 0;
  try {
    await mlflowStepRows(
      conn,
      chunkRows === undefined ? null : sqliteAside(db, { program: MLFLOW_STEPS_PROGRAM }),
      run,
      async (got) => {
        rows.push(...got.map((g) => g.slice(0, 5)));
      },
      chunkRows === undefined
        ? {}
        : {
            chunkRows,
            again: async () => {
              again++;
              rows = [];
            },
          },
    );
    return { rows, again };
  } finally {
    conn.close();
  }
}

describe('MLflow SQLite store read in rowid chunks', () => {
  it('gives the single query’s step rows at every chunk size', async () => {
    for (const [name, run] of Object.entries(ids)) {
      const whole = await read(run);
      if (name === 'nometrics') expect(whole.rows).toEqual([]);
      else expect(whole.rows.length).toBeGreaterThan(0);
      for (const chunkRows of [1, 2, 3, 5, 8, 64, 16_384]) {
        const got = await read(run, chunkRows);
        const what = `${name}, ${chunkRows} rows a chunk`;
        expect(got.rows, what).toEqual(whole.rows);
        // Out of order at this grain: the steps given were taken back once and the single query read.
        expect(got.again, what).toBe(name === 'resumed' && chunkRows <= 64 ? 1 : 0);
      }
    }
    // The value logged twice at one step: the later timestamp's, though written first.
    const inorder = await read(ids.inorder, 2);
    const step10 = inorder.rows.find((r) => r[0] === 10)!;
    expect((JSON.parse(step10[2] as string) as Record<string, number>)['order/relogged']).toBe(2.5);
    expect(inorder.rows.find((r) => r[0] === 30)![3]).toBe(44);
  });

  it('an import stores the same metrics and records whatever the chunk size, a resumed run read again', async () => {
    const stored: Record<string, string>[] = [];
    for (const chunkRows of [3, 16_384]) {
      const store = await RunStore.open(join(dir, `store-${chunkRows}`));
      try {
        const runs = (await scanTrackers(db, { mlflowChunkRows: chunkRows })).runs;
        const out = await importTrackerRuns(store, runs);
        expect(out.empty).toEqual(['nometrics']);
        expect(out.runIds).toHaveLength(5);
        // The resumed run's first, abandoned copy is gone: one lab run per MLflow run.
        expect((await store.listRuns()).length).toBe(5);
        const byName: Record<string, string> = {};
        for (const id of out.runIds) {
          const rec = (await store.getRun(id))!;
          const {
            id: _id,
            createdAt: _c,
            startedAt: _s,
            finishedAt: _f,
            updatedAt: _u,
            ...kept
          } = rec as unknown as Record<string, unknown>;
          const source = { ...(kept.source as Record<string, unknown>), importedAt: '' };
          const alerts = (kept.alerts as { runId: string }[]).map((a) => ({ ...a, runId: '' }));
          byName[rec.name] =
            `${JSON.stringify({ ...kept, source, alerts })}\n` + readFileSync(join(store.runDir(id), METRICS_FILE), 'utf8');
        }
        stored.push(byName);
      } finally {
        await store.close();
      }
    }
    expect(Object.keys(stored[0]).sort()).toEqual(['alternate-a', 'alternate-b', 'inorder', 'onestep', 'resumed']);
    expect(stored[0]).toEqual(stored[1]);
    // The resumed run holds steps 0-49, steps 20-39 with the values logged again.
    const resumed = stored[0].resumed.split('\n').filter((l) => l.startsWith('{"step"'));
    expect(resumed).toHaveLength(50);
    expect(resumed[25]).toContain('"step":25');
    expect(resumed[25]).toContain('425');
  });
});
