/**
 * The app's live follows (follow.start / stop / list): one LogFollower per followed log, publishing what it
 * stores on the event bus exactly as a training session does — `run.metrics` (batched, at most one batch per
 * run per tick, non-finite values as null with their kind), `run.alert` (the stored copy), `session.status`
 * (running while followed, completed at the end) and `runs.changed` (a run created, ended, or a restart's new
 * run).
 *
 * A tracker's SQLite database (MLflow's store, Trackio's; told by its content, as `arlarena follow` tells it) is
 * followed by a TrackerDbFollower instead (followTrackers.ts): polled read-only, one lab run per tracker run, each
 * published the same way; stopping any of its runs stops the whole follow, which leaves no handle on the database.
 */
import type { FollowInfo } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { toWireRecord, type WireMetricRecord } from '../../shared/nonFinite';
import type { EmitFn } from '../sessions/sessionManager';
import type { RunStore } from '../store/runStore';
import { LogFollower, type FollowOptions } from './follow';
import { TrackerDbFollower } from './followTrackers';
import { ImportError } from './importLogs';
import { isSqliteDbFile } from './sqliteReadOnly';

const TRACKER_DB_NAMES = { 'mlflow-sqlite': 'an MLflow SQLite store', trackio: 'a Trackio database' } as const;

/** Event batching tick (ms), as the session manager's default. */
const TICK_MS = 250;

export class FollowManager {
  private follows = new Set<LogFollower>();
  private dbs = new Set<TrackerDbFollower>();
  private pending = new Map<string, WireMetricRecord[]>();
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: RunStore,
    private readonly emit: EmitFn,
    private readonly defaults: Partial<FollowOptions> = {},
  ) {}

  private queue(runId: string, records: readonly MetricRecord[]): void {
    const cur = this.pending.get(runId) ?? [];
    for (const r of records) cur.push(toWireRecord(r));
    this.pending.set(runId, cur);
    this.timer ??= setTimeout(() => this.flushEvents(), TICK_MS);
  }

  private flushEvents(): void {
    this.timer = null;
    for (const [runId, records] of this.pending) this.emit('run.metrics', { runId, records });
    this.pending.clear();
    // A database's runs have no session reporting progress: their status goes with their new records, so a page
    // opened after the follow started learns what it follows.
    for (const [runId, f] of this.statusAfter) this.dbStatus(f, runId);
    this.statusAfter.clear();
  }

  /** Database runs with records sent since the last batch. */
  private statusAfter = new Map<string, TrackerDbFollower>();

  private status(f: LogFollower, runId: string): void {
    const info = f.info();
    const rec = this.store.cached(runId);
    const status = runId === info.runId ? info.status : (rec?.status ?? 'completed');
    const startedMs = Date.parse(rec?.startedAt ?? info.startedAt);
    this.emit('session.status', {
      runId,
      status,
      step: rec?.step ?? info.step,
      totalSteps: rec?.totalSteps ?? info.step,
      etaSeconds: null,
      elapsedSeconds: Number.isFinite(startedMs) ? Math.max(0, (Date.now() - startedMs) / 1000) : 0,
      error: rec?.error ?? null,
      phase: null,
      // Until its first step, say what it waits for (and whether the format has shown yet).
      detail:
        status !== 'running'
          ? null
          : info.steps > 0
            ? `following ${f.path}`
            : `waiting for the first step of ${f.path}${info.format === 'detecting' ? ' (its format has not shown yet)' : ` (${info.format})`}`,
    });
  }

  /** A database follow's run: its status while followed and after, as a followed log's. */
  private dbStatus(f: TrackerDbFollower, runId: string): void {
    const info = f.followInfos().find((i) => i.runId === runId);
    const rec = this.store.cached(runId);
    const running = info?.status === 'running';
    const status = running ? 'running' : (rec?.status ?? info?.status ?? 'completed');
    const startedMs = Date.parse(rec?.startedAt ?? f.startedAt);
    // While followed, the newest step read is the run's step (the record's is written when following ends).
    const step = running ? (info?.step ?? 0) : (rec?.step ?? info?.step ?? 0);
    this.emit('session.status', {
      runId,
      status,
      step,
      totalSteps: running ? step : (rec?.totalSteps ?? step),
      etaSeconds: null,
      elapsedSeconds: Number.isFinite(startedMs) ? Math.max(0, (Date.now() - startedMs) / 1000) : 0,
      error: rec?.error ?? null,
      phase: null,
      detail:
        status === 'running' ? `following ${f.path} (polled read-only: ${f.runIds.length} run${f.runIds.length === 1 ? '' : 's'})` : null,
    });
  }

  /**
   * Follows a tracker's database. One with no metric row yet has no run to show (its runs appear with their
   * first row): refused, nothing left open or made.
   */
  private async startDb(path: string, opts: Pick<FollowOptions, 'name' | 'tags'>): Promise<FollowInfo & { runIds: string[] }> {
    let follower: TrackerDbFollower | null = null;
    const f = await TrackerDbFollower.start(this.store, path, {
      ...(this.defaults.pollMs !== undefined ? { pollMs: this.defaults.pollMs } : {}),
      ...(this.defaults.registry ? { registry: this.defaults.registry } : {}),
      ...(opts.name ? { name: opts.name } : {}),
      ...(opts.tags ? { tags: opts.tags } : {}),
      onRecords: (runId, records) => {
        if (follower) this.statusAfter.set(runId, follower);
        this.queue(runId, records);
      },
      onAlert: (runId, alert) => {
        this.flushEvents();
        this.emit('run.alert', { runId, alert });
      },
      onRunChange: (runId) => {
        this.emit('runs.changed', { runId });
        if (follower) this.dbStatus(follower, runId);
      },
    });
    follower = f;
    const first = f.latestRunId;
    if (first === null) {
      await f.stop();
      throw new ImportError(
        'EMPTY',
        `${path} is ${TRACKER_DB_NAMES[f.format]} with no metric logged yet: there is no run to follow until its writer logs a first value; follow it again then (each run that starts later is followed too)`,
      );
    }
    this.dbs.add(f);
    for (const id of f.runIds) this.dbStatus(f, id);
    void f.done.then(
      () => this.ended(f),
      () => this.ended(f),
    );
    const info = f.followInfos().find((i) => i.runId === first)!;
    return { ...info, runIds: f.runIds };
  }

  private ended(f: TrackerDbFollower): void {
    if (!this.dbs.delete(f)) return;
    this.flushEvents();
    for (const id of f.runIds) this.dbStatus(f, id);
  }

  async start(path: string, opts: Pick<FollowOptions, 'format' | 'name' | 'tags'> = {}): Promise<FollowInfo> {
    if (opts.format === undefined && (await isSqliteDbFile(path))) return this.startDb(path, opts);
    let follower: LogFollower | null = null;
    follower = await LogFollower.start(this.store, path, {
      ...this.defaults,
      ...opts,
      onRecords: (runId, records) => this.queue(runId, records),
      onAlert: (runId, alert) => {
        this.flushEvents();
        this.emit('run.alert', { runId, alert });
      },
      onRunChange: (runId) => {
        this.emit('runs.changed', { runId });
        if (follower) this.status(follower, runId);
      },
    });
    const f = follower;
    this.follows.add(f);
    this.status(f, f.runId);
    void f.done.then(() => {
      this.follows.delete(f);
      this.flushEvents();
      this.status(f, f.runId);
    });
    return f.info();
  }

  private find(runId: string): LogFollower | undefined {
    for (const f of this.follows) if (f.runIds.includes(runId)) return f;
    return undefined;
  }

  private findDb(runId: string): TrackerDbFollower | undefined {
    for (const f of this.dbs) if (f.runIds.includes(runId)) return f;
    return undefined;
  }

  /**
   * Stop the follow that feeds `runId` (or fed it before a restart); undefined when none does. A database's
   * follow stops as a whole: the answer is `runId`'s, with every run it fed in `runIds`.
   */
  async stop(runId: string): Promise<FollowInfo | undefined> {
    const db = this.findDb(runId);
    if (db) {
      await db.stop();
      this.ended(db);
      const rec = this.store.cached(runId);
      const info = db.followInfos().find((i) => i.runId === runId)!;
      return { ...info, status: rec?.status ?? info.status, step: rec?.step ?? info.step };
    }
    const f = this.find(runId);
    if (!f) return undefined;
    const info = await f.stop();
    this.follows.delete(f);
    this.flushEvents();
    return info;
  }

  list(): FollowInfo[] {
    return [...[...this.follows].map((f) => f.info()), ...[...this.dbs].flatMap((f) => f.followInfos())];
  }

  isFollowed(runId: string): boolean {
    return this.find(runId) !== undefined || this.findDb(runId) !== undefined;
  }

  async dispose(): Promise<void> {
    for (const f of [...this.follows]) await f.stop().catch(() => undefined);
    this.follows.clear();
    for (const f of [...this.dbs]) await f.stop().catch(() => undefined);
    this.dbs.clear();
    if (this.timer) clearTimeout(this.timer);
    this.flushEvents();
  }
}
