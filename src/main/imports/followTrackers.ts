/**
 * Live follow of a tracker's SQLite database that is still being written (MLflow's `mlflow.db`, Trackio's
 * `<project>.db`): polled, read-only, never locking the writer out (sqliteReadOnly.ts: `readonly`, busy timeout;
 * Trackio's WAL mode lets readers run beside the writer).
 *
 * Each poll reads the rows added since the last one, by rowid (both stores append: MLflow's `metrics` is a rowid
 * table, Trackio's has an AUTOINCREMENT id), and groups them per tracker run into steps. A run's step is sent on
 * when a row of a later step arrives, or when a poll finds nothing new (the writer went quiet: the newest step
 * shows without waiting for the next one; values that still come for it are counted by the RunWriter as steps at
 * or below one already stored). Runs that appear while following get a lab run of their own. Each lab run is a
 * RunWriter in follow mode: the collapse detector runs on each new step and its alerts are stored as raised.
 *
 * A run keeps its first MAX_RUN_KEYS distinct keys, the values of later new keys counted in its skipped, as the
 * one-shot import of the same database does (importTrackers.ts, RunKeyBound): a followed run and the import of the
 * final database hold the same values.
 *
 * The database is open only during a poll (opened, read, closed), so between polls and after stop() the lab holds
 * no handle on it. Used by `arlarena follow` and by the app's follow.start (followManager.ts).
 */
import { stat } from 'node:fs/promises';
import { RunKeyBound } from '../../core/formats/steps';
import type { SourceMeta, SourceRunInfo } from '../../core/formats/types';
import type { Alert, FollowInfo, RunRecord } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import type { RunStore } from '../store/runStore';
import { sha256File } from './files';
import { defaultRegistry, type FormatRegistry } from './registry';
import { RunWriter } from './runWriter';
import { openReadOnly, tablesOf, type SqliteDb } from './sqliteReadOnly';
import { mlflowValue, nestParams, sqliteKind, trackioNumbers, unMlflowKey } from './trackers';
import { ImportError } from './importLogs';
import { SKIP_REPLAYED } from './follow';

interface Pending {
  step: number;
  values: Record<string, number>;
}

interface Followed {
  readonly writer: RunWriter;
  readonly info: SourceRunInfo;
  /** The run's config as the import reads it (MLflow's params, Trackio's config row), once the writer logged it. */
  config?: Record<string, unknown>;
  pending: Pending | null;
  /** The run's distinct keys, bounded as an import bounds them; values left out are counted in `skipped`. */
  readonly keys: RunKeyBound;
  readonly skipped: Record<string, number>;
  /** The rowid of the run's newest row read (the app opens the run that logged last). */
  lastRowid: number;
  /** A continued run: the last step it held; steps up to it are replays (counted, not stored again). */
  replayThrough: number;
}

export interface TrackerFollowOptions {
  /** Poll interval (ms). Default 1000. */
  readonly pollMs?: number;
  readonly registry?: FormatRegistry;
  readonly tags?: readonly string[];
  /** Each lab run is named `<name> · <the tracker's run name>` (default: the tracker's run name). */
  readonly name?: string;
  /** Stop after this many seconds without new rows. Default: follow until stop(). */
  readonly idleSeconds?: number;
  /** Stored metric records of a followed run (the app publishes them as run.metrics). */
  readonly onRecords?: (runId: string, records: readonly MetricRecord[]) => void;
  /** Alerts raised or extended, after they are stored (run.alert). */
  readonly onAlert?: (runId: string, alert: Alert, kind: 'raised' | 'updated') => void;
  /** A lab run of this follow was created or ended (runs.changed, session.status). */
  readonly onRunChange?: (runId: string) => void;
}

export interface TrackerFollowInfo {
  readonly path: string;
  readonly format: 'mlflow-sqlite' | 'trackio';
  /** Lab run id per tracker run id. */
  readonly runs: Record<string, string | null>;
  readonly steps: number;
  /** 'stopped' when the database could no longer be read (`error` says why; the steps read are kept). */
  readonly status: 'running' | 'completed' | 'stopped';
  readonly error?: string;
}

/** How long the first and last reads wait for the writer's lock (ms): they must read. */
const START_BUSY_MS = 10_000;
/** How long a read while following waits for it (ms): short, since the wait holds the event loop. */
const POLL_BUSY_MS = 50;

export class TrackerDbFollower {
  private timer: NodeJS.Timeout | null = null;
  private lastRowid = 0;
  private readonly runs = new Map<string, Followed>();
  private polling: Promise<void> | null = null;
  private stopped = false;
  private error: Error | null = null;
  private lastChange = Date.now();
  private resolveDone!: (i: TrackerFollowInfo) => void;
  private rejectDone!: (e: Error) => void;
  /**
   * Settles when following stops (stop(), --until-idle seconds without new rows, or the database could no longer
   * be read); rejects only when the lab could not store the end (its own disk). Handled here, so a follow nobody
   * awaits cannot end the process with an unhandled rejection.
   */
  readonly done: Promise<TrackerFollowInfo> = new Promise((res, rej) => {
    this.resolveDone = res;
    this.rejectDone = rej;
  });
  private stopping: Promise<TrackerFollowInfo> | null = null;
  private status: 'running' | 'completed' | 'stopped' = 'running';
  /** Why following ended early (the database could not be read), or null. */
  private reason: string | null = null;
  readonly startedAt = new Date().toISOString();
  private readonly registry: FormatRegistry;
  private readonly pollMs: number;

  private constructor(
    private readonly store: RunStore,
    readonly path: string,
    readonly format: 'mlflow-sqlite' | 'trackio',
    private readonly byRunId: boolean,
    /** Trackio: whether the database has a configs table, and whether it is keyed by run_id (else run_name). */
    private readonly configs: 'none' | 'run_id' | 'run_name',
    private readonly opts: TrackerFollowOptions,
  ) {
    this.registry = opts.registry ?? defaultRegistry;
    this.pollMs = opts.pollMs ?? 1000;
    this.done.catch(() => undefined);
  }

  /** Starts following `path` (a database with MLflow's or Trackio's tables); refuses anything else. */
  static async start(store: RunStore, path: string, opts: TrackerFollowOptions = {}): Promise<TrackerDbFollower> {
    let kind: 'mlflow-sqlite' | 'trackio' | null;
    let byRunId = true;
    let configs: 'none' | 'run_id' | 'run_name' = 'none';
    try {
      const db = openReadOnly(path);
      try {
        const tables = tablesOf(db);
        kind = sqliteKind(tables);
        if (kind === 'trackio') byRunId = tables.get('metrics')!.has('run_id');
        const cfg = tables.get('configs');
        if (kind === 'trackio' && cfg) configs = cfg.has('run_id') ? 'run_id' : 'run_name';
      } finally {
        db.close();
      }
    } catch (e) {
      // Damaged, not a database after all, unreadable: one line, not SQLite's error object.
      throw new ImportError(
        'UNREADABLE',
        `${path} could not be read as a SQLite database (${(e as Error).message.split('\n')[0]}); nothing was followed`,
      );
    }
    if (kind === null)
      throw new ImportError(
        'UNKNOWN_FORMAT',
        `${path} is a SQLite database without MLflow's or Trackio's tables: the databases the lab follows are MLflow SQLite stores and Trackio databases; nothing was followed`,
      );
    const f = new TrackerDbFollower(store, path, kind, byRunId, configs, opts);
    try {
      await f.continueInterrupted();
      await f.poll();
    } catch (e) {
      // Nothing follows a database whose first read failed: runs made so far end stopped, with the reason.
      f.error = e instanceof Error ? e : new Error(String(e));
      await f.stop().catch(() => undefined);
      throw e;
    }
    f.schedule();
    return f;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.polling = this.poll(POLL_BUSY_MS).catch((e: unknown) => {
        this.error = e instanceof Error ? e : new Error(String(e));
      });
      void this.polling.then(() => {
        const idle = this.opts.idleSeconds;
        if (this.error) void this.stop().catch(() => undefined);
        else if (idle !== undefined && Date.now() - this.lastChange > idle * 1000) void this.stop().catch(() => undefined);
        else this.schedule();
      });
    }, this.pollMs);
  }

  private runInfo(db: SqliteDb, id: string): SourceRunInfo {
    if (this.format === 'mlflow-sqlite') {
      const r = db
        .prepare(
          'SELECT r.name AS name, e.name AS exp, r.start_time AS start FROM runs r LEFT JOIN experiments e ON e.experiment_id = r.experiment_id WHERE r.run_uuid = ?',
        )
        .get(id) as { name: string | null; exp: string | null; start: number | null } | undefined;
      return {
        tracker: 'mlflow',
        id,
        ...(r?.name ? { name: r.name } : {}),
        ...(r?.exp ? { project: r.exp } : {}),
        ...(r?.start ? { startTime: new Date(r.start).toISOString() } : {}),
        state: 'running',
      };
    }
    const name = this.byRunId
      ? ((db.prepare('SELECT run_name AS n FROM metrics WHERE run_id = ? LIMIT 1').get(id) as { n: string } | undefined)?.n ?? id)
      : id;
    return { tracker: 'trackio', id, name, state: 'running' };
  }

  /** The note that names a lab run's tracker run (its first): how a restarted follow finds the run to continue. */
  private static marker(tracker: string, id: string): string {
    return `${tracker} run ${id}, followed live`;
  }

  private newFollowed(info: SourceRunInfo, continuing: boolean): Followed {
    const tags = [...(this.opts.tags ?? []), info.tracker, ...(info.project ? [`experiment:${info.project}`] : [])];
    const own = info.name ?? info.id;
    const writer = new RunWriter(this.store, {
      registry: this.registry,
      format: this.format,
      name: this.opts.name ? `${this.opts.name} · ${own}` : own,
      tags,
      paths: [this.path],
      following: true,
      // A continued run keeps its own notes (the marker first), which attach() carries over.
      notes: continuing ? [] : [TrackerDbFollower.marker(info.tracker, info.id)],
      ...(this.opts.onRecords ? { onRecords: this.opts.onRecords } : {}),
      ...(this.opts.onAlert ? { onAlert: this.opts.onAlert } : {}),
    });
    const skipped: Record<string, number> = {};
    return { writer, info, pending: null, keys: new RunKeyBound(skipped), skipped, lastRowid: 0, replayThrough: -Infinity };
  }

  private followed(db: SqliteDb, id: string): Followed {
    let f = this.runs.get(id);
    if (!f) {
      f = this.newFollowed(this.runInfo(db, id), false);
      this.runs.set(id, f);
    }
    return f;
  }

  /**
   * Runs a follow of this database left behind when its process died (interrupted, still marked followed): each is
   * taken up again, so a restarted follow continues them (as a log's follow does) instead of making a second run
   * per tracker run. Their stored steps come again from the start of the database and are dropped as replays.
   */
  private async continueInterrupted(): Promise<void> {
    const tracker = this.format === 'mlflow-sqlite' ? 'mlflow' : 'trackio';
    const left: { id: string; rec: RunRecord }[] = [];
    for (const s of await this.store.listRuns({ status: ['interrupted'] })) {
      if (s.kind !== 'imported') continue;
      const rec = await this.store.getRun(s.id);
      const src = rec?.source;
      if (!rec || !src?.following || src.format !== this.format || src.paths.length !== 1 || src.paths[0] !== this.path) continue;
      const first = src.notes[0] ?? '';
      const prefix = `${tracker} run `;
      const id = first.startsWith(prefix) ? first.slice(prefix.length, first.lastIndexOf(', followed live')) : '';
      if (id && first === TrackerDbFollower.marker(tracker, id)) left.push({ id, rec });
    }
    if (left.length === 0) return;
    // The newest run per tracker run (an older one is another story: left alone).
    left.sort((a, b) => b.rec.createdAt.localeCompare(a.rec.createdAt));
    const db = openReadOnly(this.path);
    try {
      for (const { id, rec } of left) {
        if (this.runs.has(id)) continue;
        const f = this.newFollowed(this.runInfo(db, id), true);
        const last = await f.writer.attach(rec);
        if (last !== null) f.replayThrough = last;
        this.runs.set(id, f);
      }
    } finally {
      db.close();
    }
  }

  private addRow(f: Followed, step: number, key: string, value: number): void {
    if (f.pending && f.pending.step !== step) this.send(f);
    f.pending ??= { step, values: {} };
    f.pending.values[key] = value;
  }

  /** The run's pending step to its writer, past the run's key bound (as importTrackerRuns applies it). */
  private send(f: Followed): void {
    if (!f.pending) return;
    // Replays too: the keys they carried count toward the bound as when they were first read.
    f.keys.apply(f.info.id, f.pending.values);
    if (f.pending.step <= f.replayThrough) f.skipped[SKIP_REPLAYED] = (f.skipped[SKIP_REPLAYED] ?? 0) + 1;
    else f.writer.add({ run: '', step: f.pending.step, values: f.pending.values });
    f.pending = null;
  }

  /**
   * One poll: rows after the last rowid seen, in rowid order; then store what is complete. `busyMs`: how long a
   * read waits for the writer's lock. better-sqlite3 waits synchronously, holding the process's event loop (the
   * app's server with it), so the polls while following wait briefly and, when the writer still holds its lock
   * (MLflow's rollback journal locks the file for each commit), try again at the next poll.
   */
  private async poll(busyMs = START_BUSY_MS): Promise<void> {
    const db = openReadOnly(this.path, busyMs);
    let rows = 0;
    let busy = false;
    try {
      if (this.format === 'mlflow-sqlite') {
        const it = db
          .prepare('SELECT rowid, run_uuid, step, key, value, is_nan FROM metrics WHERE rowid > ? ORDER BY rowid LIMIT 200000')
          .raw(true)
          .iterate(this.lastRowid) as IterableIterator<[number, string, number, string, number, number]>;
        for (const [rowid, run, step, key, value, isNan] of it) {
          this.lastRowid = rowid;
          rows++;
          const f = this.followed(db, run);
          f.lastRowid = rowid;
          this.addRow(f, step, unMlflowKey(key), mlflowValue(value, isNan));
        }
      } else {
        const sql = `SELECT id, ${this.byRunId ? 'run_id' : 'run_name'}, step, metrics FROM metrics WHERE id > ? ORDER BY id LIMIT 20000`;
        const it = db.prepare(sql).raw(true).iterate(this.lastRowid) as IterableIterator<[number, string, number, string]>;
        for (const [id, run, step, json] of it) {
          this.lastRowid = id;
          rows++;
          let o: unknown;
          try {
            o = JSON.parse(json);
          } catch {
            continue;
          }
          if (o === null || typeof o !== 'object' || Array.isArray(o)) continue;
          const vals: Record<string, number> = {};
          trackioNumbers(o as Record<string, unknown>, vals);
          const f = this.followed(db, run);
          f.lastRowid = id;
          for (const [k, v] of Object.entries(vals)) this.addRow(f, step, k, v);
        }
      }
      // Configs are logged at a run's start, before its metrics as a rule; a run whose config has not shown is
      // asked again at each poll.
      for (const [id, f] of this.runs) f.config ??= this.configOf(db, id);
    } catch (e) {
      if (busyMs === START_BUSY_MS || !String((e as { code?: unknown }).code).startsWith('SQLITE_BUSY')) throw e;
      busy = true;
    } finally {
      db.close();
    }
    // Locked out by the writer: not a quiet poll (the writer is busy writing); the rows read so far stay pending.
    if (busy) return;
    if (rows > 0) this.lastChange = Date.now();
    // Quiet: the writer added nothing since the last poll, so the newest step of each run is as complete as it
    // will be for now.
    if (rows === 0) for (const f of this.runs.values()) this.send(f);
    for (const f of this.runs.values()) {
      await f.writer.flush(this.meta(f));
      // A run with a step read, even one still pending, has its lab run from now on (the app opens it at once).
      if (f.writer.runId === null && f.pending) await f.writer.ensureRun(this.meta(f));
      else if (f.writer.runId === null) continue;
      // The config onto the record as soon as it shows (a run made before it did); told like a new run.
      const revealed = await f.writer.revealConfig(this.meta(f));
      if (!this.announced.has(f) || revealed) {
        this.announced.add(f);
        this.opts.onRunChange?.(f.writer.runId!);
      }
    }
  }

  /** Runs whose creation was told through onRunChange. */
  private readonly announced = new Set<Followed>();

  private meta(f: Followed): SourceMeta {
    return { framework: 'unknown', notes: [], run: f.info, ...(f.config ? { config: f.config } : {}) };
  }

  /**
   * A tracker run's config as importTrackerRuns reads it (trackers.ts): MLflow's params nested at '/', Trackio's
   * config row without its `_` keys. Undefined while the writer has logged none.
   */
  private configOf(db: SqliteDb, id: string): Record<string, unknown> | undefined {
    if (this.format === 'mlflow-sqlite') {
      const params: Record<string, string> = {};
      for (const p of db.prepare('SELECT key, value FROM params WHERE run_uuid = ?').all(id) as { key: string; value: string }[])
        params[p.key] = p.value;
      return Object.keys(params).length > 0 ? nestParams(params) : undefined;
    }
    if (this.configs === 'none') return undefined;
    const c = db.prepare(`SELECT config FROM configs WHERE ${this.configs} = ?`).get(id) as { config: string } | undefined;
    if (!c) return undefined;
    try {
      const o = JSON.parse(c.config) as unknown;
      if (o === null || typeof o !== 'object' || Array.isArray(o)) return undefined;
      return Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith('_')));
    } catch {
      return undefined;
    }
  }

  /** The lab runs this follow made, oldest first. */
  get runIds(): string[] {
    return [...this.runs.values()].flatMap((f) => (f.writer.runId ? [f.writer.runId] : []));
  }

  /** The lab run of the tracker run that logged last (the one most likely still training), or null. */
  get latestRunId(): string | null {
    let best: Followed | null = null;
    for (const f of this.runs.values()) if (f.writer.runId && (!best || f.lastRowid > best.lastRowid)) best = f;
    return best?.writer.runId ?? null;
  }

  /** The app's view (follow.list): one entry per lab run, each naming all the runs of this follow. */
  followInfos(): FollowInfo[] {
    const runIds = this.runIds;
    return [...this.runs.values()].flatMap((f) =>
      f.writer.runId
        ? [
            {
              runId: f.writer.runId,
              path: this.path,
              format: this.format,
              step: Number.isFinite(f.writer.highWater) ? f.writer.highWater : 0,
              steps: f.writer.stored,
              startedAt: this.startedAt,
              status: this.status,
              runIds,
            },
          ]
        : [],
    );
  }

  /** Lab run ids so far, by tracker run id (null while a run has no step yet). */
  get info(): TrackerFollowInfo {
    let steps = 0;
    const runs: Record<string, string | null> = {};
    for (const [id, f] of this.runs) {
      runs[id] = f.writer.runId;
      steps += f.writer.stored;
    }
    return { path: this.path, format: this.format, runs, steps, status: this.status, ...(this.reason ? { error: this.reason } : {}) };
  }

  /** Stops polling, reads what is left, and completes every lab run. */
  stop(): Promise<TrackerFollowInfo> {
    this.stopping ??= this.finishAll().then(
      (i) => {
        this.resolveDone(i);
        return i;
      },
      (e: unknown) => {
        const err = e instanceof Error ? e : new Error(String(e));
        this.rejectDone(err);
        throw err;
      },
    );
    return this.stopping;
  }

  private async finishAll(): Promise<TrackerFollowInfo> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    // A database that can no longer be read (deleted, moved, permission taken away) ends the follow: every step
    // read before is stored and kept, and the runs end stopped with the reason, not failed (they lost nothing).
    let trouble = this.error;
    let sha: string[] = [];
    let bytes = 0;
    if (trouble === null) {
      try {
        await this.poll();
        await this.poll(); // a quiet poll sends the last pending steps
        sha = [await sha256File(this.path)];
        bytes = (await stat(this.path)).size;
      } catch (e) {
        trouble = e instanceof Error ? e : new Error(String(e));
      }
    }
    if (trouble !== null) for (const f of this.runs.values()) this.send(f);
    const reason =
      trouble === null
        ? null
        : `following stopped: ${this.path} could not be read (${trouble.message.split('\n')[0]}); the steps read before are kept`;
    this.status = reason === null ? 'completed' : 'stopped';
    this.reason = reason;
    for (const f of this.runs.values()) {
      await f.writer.finish({
        meta: this.meta(f),
        sha256: sha,
        bytes,
        parserSkipped: f.skipped,
        notes: [reason ?? 'followed live until stopped'],
        ...(reason === null ? {} : { status: 'stopped' as const, error: reason }),
      });
      if (f.writer.runId) this.opts.onRunChange?.(f.writer.runId);
    }
    return this.info;
  }
}
