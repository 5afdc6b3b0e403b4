/**
 * The worker side of a session, transport-free: given a start message and a `post` function, run the job with
 * hooks that persist through the run's files (single writer), feed the live collapse detector, and report to
 * the host. Also used in-process by `arlarena reproduce`.
 */
import type { TrainerCheckpoint, TrainerControl, TrainerHooks } from '../../core/training/types';
import type { MetricRecord } from '../../shared/metrics';
import { CollapseDetector } from '../../core/stability/detector';
import { hintsFor, recipeOf } from '../../core/stability/hints';
import { NON_FINITE_WEIGHTS_METRIC, type NonFiniteWeightsError } from '../../core/training/finiteWeights';
import type { Alert } from '../../shared/api';
import { RunFiles } from '../store/runFiles';
import type { HostToWorker, StartMessage, WorkerToHost } from './protocol';
import type { TrainingJob } from './job';

export interface JobControl {
  /** Deliver a control message from the host (pause / resume / stop). */
  handle(msg: HostToWorker): void;
}

export interface RunJobOptions {
  readonly start: StartMessage;
  readonly job: TrainingJob;
  readonly post: (msg: WorkerToHost) => void;
  /** Receives the control handle once the job is set up. */
  readonly onControl?: (c: JobControl) => void;
  /** Ask the job to stop once this step is done (partial reruns). */
  readonly stopAfterStep?: number;
}

/** The critical alert for a job that stopped on non-finite policy weights (NonFiniteWeightsError), else null. */
function nonFiniteWeightsAlert(runId: string, e: unknown, recipe: ReturnType<typeof recipeOf>): Alert | null {
  if (!(e instanceof Error) || e.name !== 'NonFiniteWeightsError') return null;
  const { step, variable } = e as NonFiniteWeightsError;
  return {
    id: `${runId}:non_finite:${NON_FINITE_WEIGHTS_METRIC}:${step}`,
    runId,
    rule: 'non_finite',
    severity: 'critical',
    metric: NON_FINITE_WEIGHTS_METRIC,
    firstStep: step,
    lastStep: step,
    message: `The policy weights (${variable}) became non-finite at step ${step}; the run was stopped.`,
    hint: hintsFor(recipe).nonFinite,
    evidence: { steps: [step], values: [null] },
    acknowledged: false,
  };
}

export async function runJob({
  start,
  job,
  post,
  onControl,
  stopAfterStep,
}: RunJobOptions): Promise<WorkerToHost & { type: 'done' | 'failed' }> {
  const files = new RunFiles(start.runDir);
  const detector = new CollapseDetector(start.runId, start.detector, recipeOf(start.config));
  let paused = false;
  let stopRequested = false;
  let wake: (() => void) | null = null;
  let writes: Promise<void> = Promise.resolve();
  let writeError: Error | null = null;
  let lastStep = 0;
  /** Last step whose metric line has been written (appends run in order on the `writes` chain). */
  let writtenStep = 0;
  const queue = (fn: () => Promise<void>) => {
    writes = writes.then(fn).catch((e: Error) => {
      writeError ??= e;
    });
  };

  onControl?.({
    handle(msg) {
      if (msg.type === 'pause') paused = true;
      else if (msg.type === 'resume') {
        paused = false;
        wake?.();
      } else if (msg.type === 'stop') {
        stopRequested = true;
        paused = false;
        wake?.();
      }
    },
  });

  let resumeFrom: TrainerCheckpoint | undefined;
  if (start.resume) resumeFrom = await files.loadLatestCheckpoint();
  if (resumeFrom) {
    const from = resumeFrom.step;
    await files.truncateAfterStep(from);
    // Rebuild the detector's state from the kept stream, silently (those alerts are already stored).
    for (const r of await files.readMetrics()) detector.feed(r);
    lastStep = from;
    writtenStep = from;
  } else {
    // A fresh start, or a resume that found no checkpoint (killed before the first one): the job starts from
    // scratch and writes its step-0 validation again, so nothing of an earlier attempt is kept (1).
    await files.truncateAfterStep(-1);
  }
  post({ type: 'started', fromStep: lastStep });

  const flushTimer = setInterval(() => {
    queue(async () => {
      const upTo = writtenStep;
      await files.flush();
      post({ type: 'flushed', step: upTo });
    });
  }, start.flushMs ?? 1000);

  const hooks: TrainerHooks = {
    onMetrics(rec: MetricRecord) {
      lastStep = rec.step;
      queue(async () => {
        await files.appendMetrics([rec]);
        writtenStep = rec.step;
      });
      post({ type: 'metrics', records: [rec] });
      for (const u of detector.feed(rec)) post({ type: 'alert', alert: u.alert, kind: u.kind });
    },
    onTrajectory(t) {
      queue(() => files.appendTrajectories([t]));
      post({ type: 'trajectory', step: t.step, trajUid: t.trajUid });
    },
    async onCheckpoint(c) {
      queue(async () => {
        await files.flush();
        await files.saveCheckpoint(c);
      });
      await writes;
      if (writeError) throw writeError;
      post({ type: 'checkpoint', step: c.step });
    },
    onStatus(s) {
      post({ type: 'status', phase: s.phase, step: s.step, totalSteps: s.totalSteps, message: s.message });
    },
    async checkControl(): Promise<TrainerControl> {
      if (writeError) throw writeError;
      if (stopAfterStep !== undefined && lastStep >= stopAfterStep) stopRequested = true;
      if (paused && !stopRequested) {
        queue(() => files.flush());
        await writes;
        post({ type: 'paused' });
        while (paused && !stopRequested) await new Promise<void>((r) => (wake = r));
        wake = null;
        if (!stopRequested) post({ type: 'resumed' });
      }
      return stopRequested ? 'stop' : 'continue';
    },
    async interrupted(): Promise<boolean> {
      // The host's stop arrives as a message: let the event loop deliver any that are waiting (the trainer's
      // tensor work between these calls is synchronous), then answer. A paused run is never mid-step.
      await new Promise<void>((r) => setImmediate(r));
      return stopRequested;
    },
  };

  try {
    const result = await job.run(
      { runId: start.runId, config: start.config, seed: start.seed, dataDir: start.dataDir },
      hooks,
      resumeFrom,
      {
        model: (model) => post({ type: 'model', model }),
      },
    );
    clearInterval(flushTimer);
    await writes;
    await files.close();
    if (writeError) throw writeError;
    const done = {
      type: 'done' as const,
      status: result.status,
      step: result.step,
      backend: result.backend,
      ...(result.model ? { model: result.model } : {}),
    };
    post(done);
    return done;
  } catch (e) {
    clearInterval(flushTimer);
    await writes;
    await files.close().catch(() => undefined);
    const failed = { type: 'failed' as const, error: e instanceof Error ? `${e.message}` : String(e) };
    const alert = nonFiniteWeightsAlert(start.runId, e, recipeOf(start.config));
    if (alert) post({ type: 'alert', alert, kind: 'raised' });
    post(failed);
    return failed;
  }
}
