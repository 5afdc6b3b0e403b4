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
  } = {},
): Promise<TrainedRun & { budgetHit: boolean }> {
  const store = await RunStore.open(dataDir);
  const progress = new Map<string, Progress>();
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
        const recs = (payload as { records: Array<{ step: number; values: Record<string, number | null> }> }).records;
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
    return { record, budgetHit: budgetHit && record.status === 'stopped' };
  } finally {
    await sessions.dispose();
    // On a full disk what is left unwritten is said above already.
    await store.close().catch((e: unknown) => {
      if (!isDiskFull(e)) throw e;
    });
  }
}
