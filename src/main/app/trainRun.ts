/**
 * "Train into the store": one resolved run config through the same session manager + training worker the app
 * uses (so the run lands in the run store and every open page sees it), with each step's headline numbers for a
 * progress display. The CLI's train/arena/warmstart and the studies use it; parsing their arguments is the CLI's
 * (src/main/cli/args.ts).
 */
import type { RunConfig } from '../../core/config/index';
import { RunStore } from '../store/runStore';
import { isDiskFull } from '../store/storageErrors';
import { SessionManager, type TrainingJobs } from '../sessions/sessionManager';
import { appCommit, appVersion } from '../platform/appInfo';
import type { RunRecord } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { fromNonFiniteKind, type WireMetricRecord } from '../../shared/nonFinite';
import { runTagsFor, type ComputeTarget } from '../remote/computeTarget';

export interface Progress {
  step: number;
  totalSteps: number;
  success: number | null;
  gradNorm: number | null;
  eta: number | null;
}

export interface TrainedRun {
  readonly record: RunRecord;
  /** The `stopWhen` reason the run was stopped for (recorded as its error line); null when it was not. */
  readonly stopReason: string | null;
}

/**
 * Asked with each batch of a run's metric records as they arrive (as the trainer logged them); a reason stops the
 * run (between updates, with a checkpoint, as `arlarena stop` does) and is recorded as its `error` line beside
 * status `stopped` (the studies' stop-on-collapse, studies/collapseWatch.ts).
 */
export type StopWhen = (records: readonly MetricRecord[]) => string | null;

/** A run.metrics event record back as the trainer logged it (non-finite values travel as null + their kind). */
export function fromWireRecord(r: WireMetricRecord): MetricRecord {
  const values: Record<string, number> = {};
  for (const [k, v] of Object.entries(r.values)) {
    const kind = r.nonFinite?.[k];
    values[k] = v !== null ? v : kind ? fromNonFiniteKind(kind) : Number.NaN;
  }
  return { step: r.step, values };
}

/**
 * The stopWhen side of the event stream of a session manager that trains one run: `onMetrics` takes each
 * run.metrics payload and asks for the stop once; `settle` records the reason on the run when it did end stopped.
 */
export function stopWatcher(
  stopWhen: StopWhen | undefined,
  stop: (runId: string) => Promise<unknown>,
): {
  onMetrics: (runId: string, records: readonly WireMetricRecord[]) => void;
  settle: (store: RunStore, record: RunRecord) => Promise<{ record: RunRecord; stopReason: string | null }>;
} {
  let reason: string | null = null;
  return {
    onMetrics(runId, records) {
      if (!stopWhen || reason !== null) return;
      const r = stopWhen(records.map(fromWireRecord));
      if (r === null) return;
      reason = r;
      // A run that already ended (its last step was the one that collapsed) answers CONFLICT: it stays completed.
      void stop(runId).catch(() => undefined);
    },
    async settle(store, record) {
      if (reason === null || record.status !== 'stopped') return { record, stopReason: null };
      return { record: await store.updateRun(record.id, { error: reason }), stopReason: reason };
    },
  };
}

/**
 * Create the run in the store and train it in the app's training worker; resolves when it ends. `onProgress`
 * gets every step's headline numbers.
 */
export async function trainInStore(
  dataDir: string,
  config: RunConfig,
  opts: {
    name?: string;
    tags?: string[];
    /** Wall-clock budget: stop the run (between updates, with a checkpoint) once it has trained this long. */
    maxMinutes?: number;
    /** Where the trainer runs (default this machine); a Ray target's runs are recorded with tag `on:ray`. */
    target?: ComputeTarget;
    onCreated?: (id: string) => void;
    onProgress?: (id: string, p: Progress) => void;
    /** Where the run trains when no target says otherwise (default: the real trainer; test kits pass theirs). */
    jobs?: TrainingJobs;
    /** Stop the run when this gives a reason (see StopWhen). */
    stopWhen?: StopWhen;
  } = {},
): Promise<TrainedRun & { budgetHit: boolean }> {
  const store = await RunStore.open(dataDir);
  const progress = new Map<string, Progress>();
  const watcher = stopWatcher(opts.stopWhen, (id) => sessions.stop(id));
  const sessions = new SessionManager({
    store,
    concurrency: 1,
    ...opts.jobs,
    ...(opts.target?.spawn ? { spawn: opts.target.spawn } : {}),
    emit: (event, payload) => {
      const pl = payload as { runId?: string };
      if (!pl.runId) return;
      const p = progress.get(pl.runId) ?? { step: 0, totalSteps: config.training.steps, success: null, gradNorm: null, eta: null };
      if (event === 'run.metrics') {
        const recs = (payload as { records: WireMetricRecord[] }).records;
        watcher.onMetrics(pl.runId, recs);
        const last = recs[recs.length - 1];
        if (last) {
          p.step = last.step;
          p.success = last.values['episode/success_rate'] ?? null;
          p.gradNorm = last.values['actor/grad_norm'] ?? null;
        }
      } else if (event === 'session.status') {
        const s = payload as { step: number; totalSteps: number; etaSeconds: number | null };
        p.step = s.step;
        p.totalSteps = s.totalSteps;
        p.eta = s.etaSeconds;
      } else return;
      progress.set(pl.runId, p);
      opts.onProgress?.(pl.runId, p);
    },
  });
  try {
    const info = await sessions.startNew({
      preset: config.preset,
      env: config.env.name,
      seed: config.seed,
      config: config as unknown as Record<string, unknown>,
      totalSteps: config.training.steps,
      appVersion: appVersion(),
      appCommit: appCommit(),
      ...(opts.name ? { name: opts.name } : {}),
      ...(opts.tags || opts.target?.kind === 'ray'
        ? { tags: [...(opts.tags ?? []), ...(opts.target ? runTagsFor(opts.target) : [])] }
        : {}),
    });
    opts.onCreated?.(info.runId);
    let budgetHit = false;
    const timer =
      opts.maxMinutes === undefined
        ? null
        : setTimeout(() => {
            budgetHit = true;
            void sessions.stop(info.runId).catch(() => undefined);
          }, opts.maxMinutes * 60_000);
    try {
      await sessions.waitFor(info.runId);
    } finally {
      if (timer) clearTimeout(timer);
    }
    await store.flush(info.runId).catch((e: unknown) => {
      if (!isDiskFull(e)) throw e;
    });
    let record = await store.getRun(info.runId);
    if (!record) throw new Error(`run ${info.runId} vanished from the store`);
    // The record could not take how the run ended (a full disk): the session knows.
    const outcome = sessions.outcome(info.runId);
    if (outcome && outcome.error !== null && (record.status !== outcome.status || record.error !== outcome.error))
      record = { ...record, status: outcome.status, error: outcome.error };
    const settled = await watcher.settle(store, record);
    return { record: settled.record, stopReason: settled.stopReason, budgetHit: budgetHit && record.status === 'stopped' };
  } finally {
    await sessions.dispose();
    // On a full disk what is left unwritten is said above already.
    await store.close().catch((e: unknown) => {
      if (!isDiskFull(e)) throw e;
    });
  }
}
