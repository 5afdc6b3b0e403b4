/**
 * A run on a Ray cluster behind the session manager's worker contract (WorkerHandle): the handle runs the usual
 * worker side (jobRunner.runJob: the run's files, the live collapse detector, the messages to the host) in this
 * process, with a TrainingJob that does not train but submits the run as a Ray job and replays the job's line
 * protocol (lineProtocol.ts) from its log as the trainer's hooks. So the local run store, the detector and
 * every view see a Ray run exactly as a local one; Stop becomes Ray's `POST /api/jobs/{id}/stop`.
 *
 * Submission id = run id: a retried submission finds its own job instead of starting a second one.
 */
import { runJob, type JobControl } from '../sessions/jobRunner';
import type { TrainingJob, JobResult } from '../sessions/job';
import type { HostToWorker, WorkerToHost } from '../sessions/protocol';
import type { SpawnWorker, WorkerHandle } from '../sessions/workerHost';
import type { MetricRecord } from '../../shared/metrics';
import type { TrainerStatus } from '../../core/training/types';
import { decodeLine, LineSplitter } from './lineProtocol';
import { RayClient, TERMINAL_JOB_STATUSES, type RayJobInfo } from './rayClient';
import { ensureLabPackage } from './labPackage';
import { RUN_CONFIG_ENV, RUN_ID_ENV } from './remoteWorker';
import { TransitError, verifyCheckpointLine, verifyTrajectoryLine } from './transit';

/** The job's command: this lab's own CLI, bundled into the working_dir (Node ≥ 20 on the node is required). */
export const LAB_ENTRYPOINT = 'node arlarena.mjs train --line-protocol';
const LAST_LINES = 20;
const CONTROL_POLL_MS = 300;
const LOG_POLL_MS = 200;

export interface RayJobOptions {
  /** Called with the job's submission id once Ray has it (tests, the CLI's "submitted" line). */
  readonly onSubmitted?: (submissionId: string, existed: boolean) => void;
}

/** A job that follows an already-submitted Ray job's log into the hooks (shared by lab runs and verl follows). */
export async function followJobLog(
  client: RayClient,
  submissionId: string,
  onLine: (line: string) => Promise<void> | void,
  shouldStop: () => Promise<boolean>,
): Promise<{ info: RayJobInfo; lastLines: string[] }> {
  const lastLines: string[] = [];
  let chain: Promise<void> = Promise.resolve();
  let lineError: Error | null = null;
  let ended = false;
  let stopSent = false;
  const poll = (async () => {
    while (!ended) {
      if (!stopSent && (await shouldStop())) {
        stopSent = true;
        await client.stopJob(submissionId).catch(() => undefined);
      }
      await new Promise((r) => setTimeout(r, CONTROL_POLL_MS));
    }
  })();
  // Ray 2.60's `GET /api/jobs/{id}/logs/tail` websocket opened and then closed at the job's end without sending a
  // line here (with token auth on and off), so the log is read with `GET /api/jobs/{id}/logs` — the whole log so
  // far, append-only — and only what is past the last read is handled: no line is lost or handled twice, and a
  // failed read is simply retried on the next round. The interval grows with the log so a long run's re-reads
  // stay cheap.
  let offset = 0;
  let failures = 0;
  const splitter = new LineSplitter((line) => {
    lastLines.push(line);
    if (lastLines.length > LAST_LINES) lastLines.shift();
    chain = chain.then(() => onLine(line)).catch((e: Error) => {
      lineError ??= e;
    });
  });
  let info: RayJobInfo | null = null;
  for (;;) {
    let terminal = false;
    try {
      info = await client.jobInfo(submissionId);
      if (!info) throw new Error(`Ray job ${submissionId} disappeared from the cluster`);
      terminal = TERMINAL_JOB_STATUSES.includes(info.status);
      // Read after the status: once the job is terminal this read holds its complete log.
      const logs = await client.jobLogs(submissionId);
      if (logs.length > offset) {
        splitter.push(logs.slice(offset));
        offset = logs.length;
      }
      failures = 0;
    } catch (e) {
      if (++failures > 20) throw e;
    }
    await chain;
    if (terminal || lineError) break;
    await new Promise((r) => setTimeout(r, Math.min(2000, LOG_POLL_MS + offset / 50_000)));
  }
  splitter.end();
  await chain;
  ended = true;
  // Not awaited: a paused run's control check blocks until it is resumed or stopped; the loop ends after it.
  void poll.catch(() => undefined);
  if (lineError) throw lineError;
  if (!info) throw new Error(`Ray job ${submissionId} could not be read`);
  return { info, lastLines: lastLines.filter((l) => !l.includes('@arlarena:')) };
}

/** The TrainingJob that runs a lab run as a Ray job and replays its line protocol into the hooks. */
export function rayTrainingJob(client: RayClient, opts: RayJobOptions = {}): TrainingJob {
  return {
    async run(input, hooks, resume): Promise<JobResult> {
      // A job under this run's id already on the cluster is the run's own (the lab restarted mid-job, or a
      // submission is retried): re-attach and catch up from its log, skipping what the store already holds (up to
      // the checkpoint runJob resumed from). Otherwise submit it.
      const from = resume?.step ?? 0;
      const existing = await client.jobInfo(input.runId);
      if (resume && !existing) throw new Error(`run ${input.runId} ran on Ray, and the cluster no longer has its job: it cannot be resumed there (its checkpoint at step ${from} is here); start a new run (same config and seed give the same metrics)`);
      let sub: { submissionId: string; existed: boolean };
      if (existing) sub = { submissionId: existing.submission_id, existed: true };
      else {
        const pkg = await ensureLabPackage(client);
        sub = await client.submitJob({
          submissionId: input.runId,
          entrypoint: LAB_ENTRYPOINT,
          runtimeEnv: { working_dir: pkg.uri, env_vars: { ARLARENA_LINE_PROTOCOL: '1', [RUN_CONFIG_ENV]: JSON.stringify(input.config), [RUN_ID_ENV]: input.runId } },
          metadata: { arlarena_run: input.runId },
          entrypointNumCpus: 1,
        });
      }
      opts.onSubmitted?.(sub.submissionId, sub.existed);
      let done: JobResult | null = null;
      let failed: string | null = null;
      let lastStep = 0;
      /** Set when a file failed its check: no later line is handled, so nothing after it is written. */
      let refused: TransitError | null = null;
      const onLine = async (line: string): Promise<void> => {
        if (refused) return;
        const m = decodeLine(line);
        if (!m) return;
        switch (m.type) {
          case 'metric': {
            const rec = m.body as MetricRecord;
            if (rec.step <= from) return;
            lastStep = rec.step;
            hooks.onMetrics(rec);
            return;
          }
          case 'trajectory': {
            // Verified before it is written: a damaged or altered file is refused, not stored (transit.ts).
            const t = verifyTrajectoryLine(m.body);
            if (t.step <= from) return;
            hooks.onTrajectory(t);
            return;
          }
          case 'status':
            hooks.onStatus(m.body as TrainerStatus);
            return;
          case 'checkpoint': {
            const c = verifyCheckpointLine(m.body);
            if (c.step <= from) return;
            await hooks.onCheckpoint(c);
            return;
          }
          case 'done':
            done = m.body as JobResult;
            return;
          case 'failed':
            failed = (m.body as { error: string }).error;
            return;
        }
      };
      let followed: Awaited<ReturnType<typeof followJobLog>>;
      try {
        followed = await followJobLog(
          client,
          sub.submissionId,
          (line) => onLine(line).catch((e: unknown) => {
            if (e instanceof TransitError) refused ??= e;
            throw e;
          }),
          async () => (await hooks.checkControl()) === 'stop',
        );
      } catch (e) {
        // Set inside the line callback, which TypeScript's narrowing does not see.
        const why = refused as TransitError | null;
        if (!why) throw e;
        // The job would go on producing files the lab no longer takes: stop it, and fail the run saying why.
        await client.stopJob(sub.submissionId).catch(() => undefined);
        throw new Error(`${why.message}. The Ray job ${sub.submissionId} was stopped and the run is marked failed (what it stored before this file had verified)`);
      }
      const { info, lastLines } = followed;
      const tailText = lastLines.length ? `; its last log lines:\n${lastLines.join('\n')}` : '';
      if (failed) throw new Error(`the run failed on Ray (job ${sub.submissionId}): ${failed}`);
      if (done) return done;
      if (info.status === 'STOPPED') return { status: 'stopped', step: lastStep };
      throw new Error(`Ray job ${sub.submissionId} ended ${info.status}${info.message ? ` (${info.message.trim().split('\n').pop()})` : ''} without the trainer reporting an end${tailText}`);
    },
  };
}

/** The session manager's spawner for runs on a Ray cluster (see the file comment). */
export function raySpawner(client: RayClient, opts: RayJobOptions = {}): SpawnWorker {
  return (): WorkerHandle => {
    let msgCb: ((m: WorkerToHost) => void) | null = null;
    let exitCb: ((info: { code: number | null; error: string | null }) => void) | null = null;
    let control: JobControl | null = null;
    const early: HostToWorker[] = [];
    let lastStatus: Extract<WorkerToHost, { type: 'status' }> | null = null;
    /** Set once Pause was asked for: every later progress line keeps saying why the run goes on. */
    let pauseNote: string | null = null;
    // Delivered on later turns, in order, as a real worker's messages are.
    const deliver = (m: WorkerToHost) => {
      if (m.type === 'status') {
        lastStatus = m;
        if (pauseNote && m.message === undefined && m.phase === 'rl') m = { ...m, message: pauseNote };
      }
      setImmediate(() => msgCb?.(m));
    };
    const start = async (msg: Extract<HostToWorker, { type: 'start' }>) => {
      try {
        await runJob({
          start: msg,
          job: rayTrainingJob(client, opts),
          post: deliver,
          onControl: (c) => {
            control = c;
            for (const m of early.splice(0)) c.handle(m);
          },
        });
      } catch (e) {
        deliver({ type: 'failed', error: e instanceof Error ? e.message : String(e) });
      }
      setImmediate(() => exitCb?.({ code: 0, error: null }));
    };
    deliver({ type: 'ready' });
    return {
      post: (msg) => {
        if (msg.type === 'start') void start(msg);
        else if (msg.type === 'pause' || msg.type === 'resume') {
          // A Ray job cannot be held between steps from here: the run goes on, and says so, rather than showing
          // "paused" while its steps keep arriving. Stop ends the job with a checkpoint.
          pauseNote = 'runs on Ray cannot pause; Stop ends the job (its checkpoint is kept)';
          deliver({ type: 'resumed' });
          deliver({ type: 'status', phase: lastStatus?.phase ?? 'rl', step: lastStatus?.step ?? 0, totalSteps: lastStatus?.totalSteps ?? 0, message: pauseNote });
        }
        else if (control) control.handle(msg);
        else early.push(msg);
      },
      onMessage: (cb) => {
        msgCb = cb;
      },
      onExit: (cb) => {
        exitCb = cb;
      },
      terminate: async () => undefined,
    };
  };
}
