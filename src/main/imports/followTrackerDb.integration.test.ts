/**
 * The app follows a tracker's database through the API (follow.start → FollowManager → TrackerDbFollower), as
 * `arlarena follow` does: MLflow's and Trackio's own writers (tests/peers/trackers_peer.py in the `trackers` venv)
 * log while the lab follows. Checked here: the steps and the detector's alerts arrive live as run.metrics /
 * run.alert, one lab run per tracker run that ends as the one-shot import of the final database; the writer is
 * never locked out; the lab holds no handle on the database while following nor after follow.stop; a run's keys
 * past the first 10,000 are left out and counted, as the import counts them; the access rules (serve --allow-dir
 * in browser mode, the native dialog's grant in the desktop app) and the refusals of what cannot be followed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import { TRACKERS_PEER, startSlowWriter } from '../../../tests/support/trackersPeer';
import { SKIP_KEYS_PAST_RUN_LIMIT } from '../../core/formats/steps';
import type { FollowInfo } from '../../shared/api';
import { createFollowHandlers, createImportsHandlers } from '../api/handlers/imports';
import { createRunsHandlers } from '../api/handlers/runs';
import type { CallContext } from '../api/types';
import { createPathGrants } from '../electron/pathGrants';
import { liveEvents, openHandlerTestLab, type HandlerTestLab } from '../testing/testLab';
import followCommand from '../cli/commands/follow';
import { RunStore } from '../store/runStore';
import { testCliContext } from '../testing/testContext';
import { until as untilWithin } from '../testing/until';
import { SKIP_REPLAYED } from './follow';
import { importTrackerRuns } from './importTrackers';
import { isSqliteDbFile } from './sqliteReadOnly';
import { scanTrackers } from './trackers';

const ROOT = resolve(import.meta.dirname, '../../..');
/** New keys per step of the wide runs: with the 2 every step logs, steps 0 and 1 reach exactly 10,000 keys. */
const NEW_KEYS = 4999;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-follow-trackerdb-'));
  const py = venvPython('trackers');
  const run = (args: string[]) =>
    new Promise<void>((res, rej) => {
      const c = spawn(py, [TRACKERS_PEER, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr.on('data', (d: Buffer) => (err += String(d)));
      c.on('exit', (code) => (code === 0 ? res() : rej(new Error(`${args.join(' ')}: exit ${code}\n${err.slice(-2000)}`))));
    });
  await Promise.all([
    run(['wide-write', 'mlflow', join(dir, 'wide-mlflow.db'), '3', String(NEW_KEYS)]),
    run(['wide-write', 'trackio', join(dir, 'wide-trackio'), '3', String(NEW_KEYS)]),
  ]);
  // MLflow's own schema with no metric logged yet, and a SQLite database of neither tracker.
  copyFileSync(join(dir, 'wide-mlflow.db'), join(dir, 'no-metric.db'));
  execFileSync(py, [
    '-c',
    'import sys, sqlite3; d = sqlite3.connect(sys.argv[1]); d.execute("DELETE FROM metrics"); d.commit()',
    join(dir, 'no-metric.db'),
  ]);
  execFileSync(py, [
    '-c',
    'import sys, sqlite3; d = sqlite3.connect(sys.argv[1]); d.execute("CREATE TABLE t (x)"); d.commit()',
    join(dir, 'other.db'),
  ]);
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function openLab(ctx: CallContext = { transport: 'browser', publishDownload: null, importRoots: [dir] }): Promise<HandlerTestLab> {
  return openHandlerTestLab(
    'arl-follow-trackerdb-lab-',
    (s) => ({ ...createImportsHandlers(s), ...createFollowHandlers(s), ...createRunsHandlers(s) }),
    ctx,
  );
}

/** This process's open files that are the database or its journal / WAL files. */
function handlesOn(db: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target === db || target.startsWith(`${db}-`)) out.push(target);
    } catch {
      // closed while listing
    }
  }
  return out;
}

const until = (what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> => untilWithin(what, ok, ms, 50);

describe('follow.start on a database its tracker is writing', () => {
  for (const kind of ['mlflow', 'trackio'] as const) {
    it(`${kind}: steps and alerts arrive live, the writer is never locked out, stop releases the database and the run equals the import`, async () => {
      const { child, exited, dbPath } = await startSlowWriter(dir, kind, 12, 0.4);
      const lab = await openLab();
      try {
        const { metrics, alerts, statuses } = liveEvents(lab);
        // Trackio writes from a background thread: its database appears a moment after the log call, first as an
        // empty file (sqlite3.connect), then with SQLite's header — a database by content from then on.
        let started: { ok: boolean; value?: { runId: string; runIds?: string[] }; error?: { message: string } } = { ok: false };
        await until(
          'a database to follow',
          async () => (await isSqliteDbFile(dbPath)) && (started = await lab.call('follow.start', { path: dbPath })).ok,
          15_000,
        );
        const runId = started.value!.runId;
        expect(started.value!.runIds).toEqual([runId]);
        const listed = (await lab.call('follow.list')).value as FollowInfo[];
        expect(listed).toEqual([
          expect.objectContaining({
            runId,
            path: dbPath,
            format: kind === 'mlflow' ? 'mlflow-sqlite' : 'trackio',
            status: 'running',
            runIds: [runId],
          }),
        ]);
        expect(statuses.find((s) => s.runId === runId)?.detail).toMatch(/polled read-only/);
        // Live: records while the writer still writes; between polls the lab holds no handle on the database.
        let writing = true;
        void exited.then(() => (writing = false));
        await until('records while the writer writes', () => !writing || metrics.some((m) => m.runId === runId));
        expect(writing).toBe(true);
        expect(handlesOn(dbPath)).toEqual([]);
        expect(await exited).toBe(0);
        await until('the NaN grad norm alert, raised live', () =>
          alerts.some((a) => a.runId === runId && /grad_norm/.test(a.alert.metric)),
        );
        const stopped = await lab.call('follow.stop', { runId });
        expect(stopped.value).toMatchObject({ runId, status: 'completed', step: 11, runIds: [runId] });
        expect(handlesOn(dbPath)).toEqual([]);
        expect((await lab.call('follow.list')).value).toEqual([]);
        expect((await lab.call('follow.stop', { runId })).error.code).toBe('NOT_FOUND');
        expect(statuses.filter((s) => s.runId === runId).at(-1)).toMatchObject({ status: 'completed' });
        const { store } = await lab.services.lab();
        const rec = (await store.getRun(runId))!;
        expect(rec).toMatchObject({ status: 'completed', name: 'live', source: { following: false, paths: [dbPath] } });
        // One lab run per tracker run, as the import of the final database makes it: same records, same alerts.
        const oneShot = await importTrackerRuns(store, (await scanTrackers(dbPath)).runs);
        expect(oneShot.runIds).toHaveLength(1);
        const full = await store.readMetrics(oneShot.runIds[0]);
        expect(full).toHaveLength(12);
        expect(await store.readMetrics(runId)).toEqual(full);
        expect(metrics.filter((m) => m.runId === runId).flatMap((m) => m.records.map((r) => r.step))).toEqual(full.map((r) => r.step));
        const brief = (alertList: { rule: string; metric: string; firstStep: number }[]) =>
          alertList.map((a) => `${a.rule} ${a.metric} ${a.firstStep}`).sort();
        expect(brief(rec.alerts).some((a) => /grad_norm 3$/.test(a))).toBe(true);
        const imported = (await store.getRun(oneShot.runIds[0]))!;
        expect(brief(rec.alerts)).toEqual(brief(imported.alerts));
        // The config the writer logged (Trackio's init config; this MLflow writer logs no params), as imported.
        expect(rec.config).toEqual(imported.config);
        if (kind === 'trackio') expect(JSON.stringify(rec.config)).toContain('grpo');
      } finally {
        child.kill();
        await lab.close();
      }
    }, 90_000);
  }
});

describe("a followed database's runs keep their first 10,000 keys, as the import does", () => {
  for (const [kind, rel] of [
    ['mlflow', 'wide-mlflow.db'],
    ['trackio', join('wide-trackio', 'arl-wide.db')],
  ] as const) {
    it(`${kind}: 3 steps of ${NEW_KEYS} new keys each: the third step's new keys are left out and counted`, async () => {
      const dbPath = join(dir, rel);
      const lab = await openLab();
      try {
        const started = await lab.call('follow.start', { path: dbPath });
        if (!started.ok) throw new Error(started.error.message);
        const runId: string = started.value.runId;
        const stopped = await lab.call('follow.stop', { runId });
        expect(stopped.value).toMatchObject({ status: 'completed', step: 2 });
        const { store } = await lab.services.lab();
        const rec = (await store.getRun(runId))!;
        expect(rec.source?.skipped).toEqual({ [SKIP_KEYS_PAST_RUN_LIMIT]: NEW_KEYS });
        const followed = await store.readMetrics(runId);
        expect(followed.map((r) => Object.keys(r.values).length)).toEqual([2 + NEW_KEYS, 2 + NEW_KEYS, 2]);
        expect(new Set(followed.flatMap((r) => Object.keys(r.values))).size).toBe(10_000);
        const oneShot = await importTrackerRuns(store, (await scanTrackers(dbPath)).runs);
        expect(await store.readMetrics(oneShot.runIds[0])).toEqual(followed);
        expect((await store.getRun(oneShot.runIds[0]))!.source?.skipped).toEqual(rec.source?.skipped);
        expect(rec.config).toEqual((await store.getRun(oneShot.runIds[0]))!.config);
      } finally {
        await lab.close();
      }
    }, 60_000);
  }
});

/** Holds MLflow's database locked (BEGIN EXCLUSIVE, as its rollback journal does for each commit) for `seconds`, while
 * it adds a step 3 with the run's 2 recurring keys; prints "locked", then "released" once committed. */
const HOLD_LOCK = `
import sqlite3, sys, time
d = sqlite3.connect(sys.argv[1], isolation_level=None)
d.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
d.execute("INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) SELECT key, value + 1, timestamp + 1, run_uuid, 3, is_nan FROM metrics WHERE step = 2 AND key NOT LIKE 'wide/%'")
time.sleep(float(sys.argv[2]))
d.execute("COMMIT")
print("released", flush=True)
`;

describe('the writer holding its lock', () => {
  it("mlflow: polls meeting the writer's lock wait 50 ms and try again, never holding the event loop; the step comes after", async () => {
    const copy = join(dir, 'locked.db');
    copyFileSync(join(dir, 'wide-mlflow.db'), copy);
    const lab = await openLab();
    try {
      const started = await lab.call('follow.start', { path: copy });
      if (!started.ok) throw new Error(started.error.message);
      const runId: string = started.value.runId;
      const holder = spawn(venvPython('trackers'), ['-c', HOLD_LOCK, copy, '4'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let said = '';
      holder.stdout.on('data', (d: Buffer) => (said += String(d)));
      // The longest the event loop went without running a 10 ms timer while the writer held its lock.
      let last = performance.now();
      let worst = 0;
      let tick: NodeJS.Timeout | undefined;
      try {
        await until('the lock', () => said.includes('locked'), 15_000);
        last = performance.now();
        tick = setInterval(() => {
          const now = performance.now();
          worst = Math.max(worst, now - last);
          last = now;
        }, 10);
        await until('the lock released', () => said.includes('released'), 20_000);
      } finally {
        clearInterval(tick);
        holder.kill();
      }
      expect(worst).toBeLessThan(1500);
      await until('step 3 after the lock', async () => ((await lab.call('follow.list')).value as FollowInfo[])[0]?.step === 3, 15_000);
      const stopped = await lab.call('follow.stop', { runId });
      expect(stopped.value).toMatchObject({ status: 'completed', step: 3 });
      const { store } = await lab.services.lab();
      expect((await store.readMetrics(runId)).map((r) => r.step)).toEqual([0, 1, 2, 3]);
    } finally {
      await lab.close();
    }
  }, 60_000);
});

describe('a follow killed and started again', () => {
  it('mlflow: arlarena follow killed with -9, then following the database again continues the same run, not a second one', async () => {
    const db = join(dir, 'restart.db');
    copyFileSync(join(dir, 'wide-mlflow.db'), db);
    const data = join(dir, 'restart-data');
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', data, 'follow', db, '--poll-ms', '100', '--json'],
      {
        cwd: ROOT,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = new Promise((r) => child.on('exit', r));
    let runId = '';
    try {
      await until(
        'the killed follower to store the 3 steps',
        async () => {
          const store = await RunStore.open(data).catch(() => null);
          if (!store) return false;
          try {
            const [run] = await store.listRuns();
            if (run && (await store.readMetrics(run.id)).length === 3) runId = run.id;
          } finally {
            await store.close();
          }
          return runId !== '';
        },
        60_000,
      );
    } finally {
      // Killed whatever happened: a follow without --until-idle never ends on its own.
      child.kill('SIGKILL');
      await exited;
    }
    // Started again (the CLI marks the dead follower's run interrupted when it opens the data folder).
    const again = testCliContext(data);
    expect(await followCommand.run([db, '--until-idle', '0.5', '--poll-ms', '100', '--json'], again.ctx)).toBe(0);
    const stopped = JSON.parse(again.out().trim().split('\n').at(-1)!) as { event: string; runIds: string[] };
    expect(stopped).toMatchObject({ event: 'stopped', runIds: [runId] });
    const store = await RunStore.open(data);
    try {
      expect((await store.listRuns()).map((r) => r.id)).toEqual([runId]);
      const rec = (await store.getRun(runId))!;
      expect(rec).toMatchObject({ status: 'completed', source: { following: false } });
      expect(rec.source?.notes.join(' ')).toContain('following continued after step 2');
      // The 3 stored steps came again and were dropped as replays; the key bound counted as in one follow.
      expect(rec.source?.skipped).toEqual({ [SKIP_KEYS_PAST_RUN_LIMIT]: NEW_KEYS, [SKIP_REPLAYED]: 3 });
      const followed = await store.readMetrics(runId);
      const oneShot = await importTrackerRuns(store, (await scanTrackers(db)).runs);
      expect(await store.readMetrics(oneShot.runIds[0])).toEqual(followed);
    } finally {
      await store.close();
    }
  }, 120_000);
});

describe('a followed database that goes away', () => {
  it('deleted while followed: its run ends stopped with the reason, every step read kept (not failed)', async () => {
    const copy = join(dir, 'gone.db');
    copyFileSync(join(dir, 'wide-trackio', 'arl-wide.db'), copy);
    const lab = await openLab();
    try {
      const { statuses } = liveEvents(lab);
      const started = await lab.call('follow.start', { path: copy });
      if (!started.ok) throw new Error(started.error.message);
      const runId: string = started.value.runId;
      await rm(copy);
      await until('the follow to end', async () => ((await lab.call('follow.list')).value as FollowInfo[]).length === 0, 20_000);
      const { store } = await lab.services.lab();
      const rec = (await store.getRun(runId))!;
      expect(rec.status).toBe('stopped');
      expect(rec.error).toContain(`following stopped: ${copy} could not be read (`);
      expect(rec.error).toMatch(/\); the steps read before are kept$/);
      expect(rec.source?.following).toBe(false);
      expect((await store.readMetrics(runId)).map((r) => r.step)).toEqual([0, 1, 2]);
      expect(statuses.filter((s) => s.runId === runId).at(-1)).toMatchObject({ status: 'stopped' });
      expect((await lab.call('follow.stop', { runId })).error.code).toBe('NOT_FOUND');
    } finally {
      await lab.close();
    }
  }, 30_000);
});

describe('what follow.start refuses on a database, and who may name one', () => {
  it('no metric logged yet, a database of neither tracker, a folder outside serve --allow-dir: refused in one line, nothing made or held', async () => {
    const lab = await openLab();
    try {
      const empty = join(dir, 'no-metric.db');
      const none = await lab.call('follow.start', { path: empty });
      expect(none.error).toMatchObject({ code: 'VALIDATION', field: 'path' });
      expect(none.error.message).toContain(`${empty} is an MLflow SQLite store with no metric logged yet`);
      expect(handlesOn(empty)).toEqual([]);
      const other = await lab.call('follow.start', { path: join(dir, 'other.db') });
      expect(other.error).toMatchObject({ code: 'VALIDATION', field: 'path' });
      expect(other.error.message).toMatch(/SQLite database without MLflow's or Trackio's tables/);
      const outside = join(await mkdtemp(join(tmpdir(), 'arl-follow-outside-')), 'mlflow.db');
      copyFileSync(join(dir, 'wide-mlflow.db'), outside);
      const refused = await lab.call('follow.start', { path: outside });
      expect(refused.error).toMatchObject({ code: 'VALIDATION', field: 'path' });
      await rm(resolve(outside, '..'), { recursive: true, force: true });
      expect((await lab.call('runs.list', {})).value).toEqual([]);
      expect((await lab.call('follow.list')).value).toEqual([]);
    } finally {
      await lab.close();
    }
  }, 30_000);

  it('the desktop app: the database the native dialog granted is followed; a path from the window is refused', async () => {
    const dbPath = join(dir, 'wide-trackio', 'arl-wide.db');
    const lab = await openLab({ transport: 'electron', publishDownload: null, pathGrants: createPathGrants(async () => dbPath) });
    try {
      expect((await lab.call('follow.start', { path: dbPath })).error).toMatchObject({ code: 'VALIDATION', field: 'path' });
      const { grant } = (await lab.call('imports.pick', { kind: 'file', purpose: 'follow' })).value;
      const started = await lab.call('follow.start', { grant });
      if (!started.ok) throw new Error(started.error.message);
      expect(((await lab.call('follow.list')).value as FollowInfo[]).map((f) => f.path)).toEqual([dbPath]);
      expect((await lab.call('follow.stop', { runId: started.value.runId })).value).toMatchObject({ status: 'completed' });
    } finally {
      await lab.close();
    }
  }, 30_000);
});
