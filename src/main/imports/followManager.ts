/**
 * The app's live follows (follow.start / stop / list): one LogFollower per followed log, publishing what it
 * stores on the event bus exactly as a training session does — `run.metrics` (batched, at most one batch per
 * run per tick, non-finite values as null with their kind), `run.alert` (the stored copy), `session.status`
 * (running while followed, completed at the end) and `runs.changed` (a run created, ended, or a restart's new
 * run).
 */
import type { FollowInfo } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { toWireRecord, type WireMetricRecord } from '../../shared/nonFinite';
import type { EmitFn } from '../sessions/sessionManager';
import type { RunStore } from '../store/runStore';
import { LogFollower, type FollowOptions } from './follow';

/** Event batching tick (ms), as the session manager's default. */
const TICK_MS = 250;

export class FollowManager {
  private follows = new Set<LogFollower>();
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
  }

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

  async start(path: string, opts: Pick<FollowOptions, 'format' | 'name' | 'tags'> = {}): Promise<FollowInfo> {
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

  /** Stop the follow that feeds `runId` (or fed it before a restart); undefined when none does. */
  async stop(runId: string): Promise<FollowInfo | undefined> {
    const f = this.find(runId);
    if (!f) return undefined;
    const info = await f.stop();
    this.follows.delete(f);
    this.flushEvents();
    return info;
  }

  list(): FollowInfo[] {
    return [...this.follows].map((f) => f.info());
  }

  isFollowed(runId: string): boolean {
    return this.find(runId) !== undefined;
  }

  async dispose(): Promise<void> {
    for (const f of [...this.follows]) await f.stop().catch(() => undefined);
    this.follows.clear();
    if (this.timer) clearTimeout(this.timer);
    this.flushEvents();
  }
}
