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
 */
import { stat } from 'node:fs/promises';
import type { SourceMeta, SourceRunInfo } from '../../core/formats/types';
import type { RunStore } from '../store/runStore';
import { sha256File } from './files';
import { defaultRegistry, type FormatRegistry } from './registry';
import { RunWriter } from './runWriter';
import { openReadOnly, tablesOf, type SqliteDb } from './sqliteReadOnly';
import { mlflowValue, sqliteKind, trackioNumbers, unMlflowKey } from './trackers';
import { ImportError } from './importLogs';

interface Pending {
  step: number;
  values: Record<string, number>;
}

interface Followed {
  readonly writer: RunWriter;
  readonly info: SourceRunInfo;
  pending: Pending | null;
}

export interface TrackerFollowInfo {
  readonly path: string;
  readonly format: 'mlflow-sqlite' | 'trackio';
  /** Lab run id per tracker run id. */
  readonly runs: Record<string, string | null>;
  readonly steps: number;
}

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
  /** Settles when following stops (stop(), or --until-idle seconds without new rows). */
  readonly done: Promise<TrackerFollowInfo> = new Promise((res, rej) => {
    this.resolveDone = res;
    this.rejectDone = rej;
  });
  private stopping: Promise<TrackerFollowInfo> | null = null;

  private constructor(
    private readonly store: RunStore,
    readonly path: string,
    readonly format: 'mlflow-sqlite' | 'trackio',
    private readonly byRunId: boolean,
    private readonly opts: { pollMs: number; registry: FormatRegistry; tags: readonly string[]; idleSeconds?: number },
  ) {}

  /** Starts following `path` (a database with MLflow's or Trackio's tables); refuses anything else. */
  static async start(
    store: RunStore,
    path: string,
    opts: { pollMs?: number; registry?: FormatRegistry; tags?: readonly string[]; idleSeconds?: number } = {},
  ): Promise<TrackerDbFollower> {
    const db = openReadOnly(path);
    let kind: 'mlflow-sqlite' | 'trackio' | null;
    let byRunId = true;
    try {
      const tables = tablesOf(db);
      kind = sqliteKind(tables);
      if (kind === 'trackio') byRunId = tables.get('metrics')!.has('run_id');
    } finally {
      db.close();
    }
    if (kind === null)
      throw new ImportError('UNKNOWN_FORMAT', `${path} is a SQLite database without MLflow's or Trackio's tables; nothing to follow`);
    const f = new TrackerDbFollower(store, path, kind, byRunId, {
      pollMs: opts.pollMs ?? 1000,
      registry: opts.registry ?? defaultRegistry,
      tags: opts.tags ?? [],
      ...(opts.idleSeconds !== undefined ? { idleSeconds: opts.idleSeconds } : {}),
    });
    await f.poll();
    f.schedule();
    return f;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.polling = this.poll().catch((e: unknown) => {
        this.error = e instanceof Error ? e : new Error(String(e));
      });
      void this.polling.then(() => {
        const idle = this.opts.idleSeconds;
        if (this.error) void this.stop().catch(() => undefined);
        else if (idle !== undefined && Date.now() - this.lastChange > idle * 1000) void this.stop().catch(() => undefined);
        else this.schedule();
      });
    }, this.opts.pollMs);
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

  private followed(db: SqliteDb, id: string): Followed {
    let f = this.runs.get(id);
    if (!f) {
      const info = this.runInfo(db, id);
      const tags = [...this.opts.tags, info.tracker, ...(info.project ? [`experiment:${info.project}`] : [])];
      const writer = new RunWriter(this.store, {
        registry: this.opts.registry,
        format: this.format,
        name: info.name ?? id,
        tags,
        paths: [this.path],
        following: true,
        notes: [`${info.tracker} run ${id}, followed live`],
      });
      f = { writer, info, pending: null };
      this.runs.set(id, f);
    }
    return f;
  }

  private addRow(f: Followed, step: number, key: string, value: number): void {
    if (f.pending && f.pending.step !== step) {
      f.writer.add({ run: '', step: f.pending.step, values: f.pending.values });
      f.pending = null;
    }
    f.pending ??= { step, values: {} };
    f.pending.values[key] = value;
  }

  /** One poll: rows after the last rowid seen, in rowid order; then store what is complete. */
  private async poll(): Promise<void> {
    const db = openReadOnly(this.path);
    let rows = 0;
    try {
      if (this.format === 'mlflow-sqlite') {
        const it = db
          .prepare('SELECT rowid, run_uuid, step, key, value, is_nan FROM metrics WHERE rowid > ? ORDER BY rowid LIMIT 200000')
          .raw(true)
          .iterate(this.lastRowid) as IterableIterator<[number, string, number, string, number, number]>;
        for (const [rowid, run, step, key, value, isNan] of it) {
          this.lastRowid = rowid;
          rows++;
          this.addRow(this.followed(db, run), step, unMlflowKey(key), mlflowValue(value, isNan));
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
          for (const [k, v] of Object.entries(vals)) this.addRow(f, step, k, v);
        }
      }
    } finally {
      db.close();
    }
    if (rows > 0) this.lastChange = Date.now();
    // Quiet: the writer added nothing since the last poll, so the newest step of each run is as complete as it
    // will be for now.
    if (rows === 0) {
      for (const f of this.runs.values()) {
        if (f.pending) {
          f.writer.add({ run: '', step: f.pending.step, values: f.pending.values });
          f.pending = null;
        }
      }
    }
    for (const f of this.runs.values()) await f.writer.flush(this.meta(f));
  }

  private meta(f: Followed): SourceMeta {
    return { framework: 'unknown', notes: [], run: f.info };
  }

  /** Lab run ids so far, by tracker run id (null while a run has no step yet). */
  get info(): TrackerFollowInfo {
    let steps = 0;
    const runs: Record<string, string | null> = {};
    for (const [id, f] of this.runs) {
      runs[id] = f.writer.runId;
      steps += f.writer.stored;
    }
    return { path: this.path, format: this.format, runs, steps };
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
    if (this.error) {
      for (const f of this.runs.values()) await f.writer.fail(`following stopped: ${this.error.message}`, this.meta(f));
      throw this.error;
    }
    await this.poll();
    await this.poll(); // a quiet poll sends the last pending steps
    const sha = [await sha256File(this.path)];
    const bytes = (await stat(this.path)).size;
    for (const f of this.runs.values())
      await f.writer.finish({ meta: this.meta(f), sha256: sha, bytes, parserSkipped: {}, notes: ['followed live until stopped'] });
    return this.info;
  }
}
