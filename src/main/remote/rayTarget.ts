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
import type { RunConfig } from '../../core/config/types';
import type { ComputeBackendInfo } from '../../shared/api';
import { decodeLine } from './lineProtocol';
import type { RayClient } from './rayClient';
import { followJobLog } from './logFollow';
import { ensureLabPackage } from './labPackage';
import { machineWorkers } from '../compute/gradPool';
import { RUN_CONFIG_ENV, RUN_ID_ENV } from './remoteWorker';
import { TransitError, verifyCheckpointLine, verifyTrajectoryLine } from './transit';

/** The job's command: this lab's own CLI, bundled into the working_dir (Node ≥ 20 on the node is required). */
export const LAB_ENTRYPOINT = 'node arlarena.mjs train --line-protocol';

export interface RayJobOptions {
  /** Called with the job's submission id once Ray has it (tests, the CLI's "submitted" line). */
  readonly onSubmitted?: (submissionId: string, existed: boolean) => void;
  /** Called with the compute a new job is submitted with (submittedBackend), before it is submitted: raySpawner records it. */
  readonly onCompute?: (backend: Omit<ComputeBackendInfo, 'available'>) => void;
}

/** Following a job's log (shared by lab runs and verl follows) lives in logFollow.ts. */
export { followJobLog } from './logFollow';

/**
 * The compute a run on Ray is submitted with, fixed here so the node has nothing left to choose (a run is a function
 * of its config, seed, backend and K):
 * - backend `auto` becomes `wasm`, the best backend the lab's package carries (tfjs-node does not travel; a node
 *   with its own build is used only when the config names `tensorflow` explicitly);
 * - K = compute.workers, or for 0 the K this machine would use on that backend (one per core: gradPool.ts), and the
 *   job reserves that many CPUs — the same K as the same run here;
 * - the rollout engine stays the config's: onnxruntime-node travels in the package (labPackage.ts).
 */
export function resolveRayCompute(compute: RunConfig['compute']): RunConfig['compute'] {
  const backend = compute.backend === 'auto' ? 'wasm' : compute.backend;
  const workers = compute.workers > 0 ? compute.workers : backend === 'tensorflow' || backend === 'tensorflow-gpu' ? 1 : machineWorkers();
  return { ...compute, backend, workers };
}

/**
 * What a run on Ray is recorded with at submission (resolved as above): the backend, the rollout engine under the
 * name the trainer reports it by (compute/index.ts) and K. The node's own report replaces it when the job ends; a
 * job that dies before that leaves this on the run, so every Ray run's record says what it was submitted with.
 */
export function submittedBackend(compute: RunConfig['compute'], where: string): Omit<ComputeBackendInfo, 'available'> {
  const c = resolveRayCompute(compute);
  const precision = c.rolloutPrecision ?? 'fp32';
  const rollout =
    c.rolloutEngine === 'onnxruntime'
      ? precision === 'fp32'
        ? 'onnxruntime-cpu'
        : `onnxruntime-cpu-${precision}`
      : `tfjs-${c.backend === 'tensorflow-gpu' ? 'tensorflow' : c.backend}`;
  return {
    training: c.backend,
    rollout,
    detail: `submitted to Ray (${where}) with training on ${c.backend}, rollouts on ${rollout}, K = ${c.workers}; the node reports its own when the job ends`,
    workers: c.workers,
  };
}

/** The CPUs a run's job reserves on Ray: its K, resolved as above from the run's compute.backend and compute.workers. */
export function rayJobCpus(backend: RunConfig['compute']['backend'], workers: number): number {
  return resolveRayCompute({ backend, workers } as RunConfig['compute']).workers;
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
      if (resume && !existing)
        throw new Error(
          `run ${input.runId} ran on Ray, and the cluster no longer has its job: it cannot be resumed there (its checkpoint at step ${from} is here); start a new run (same config and seed give the same metrics)`,
        );
      let sub: { submissionId: string; existed: boolean };
      if (existing) sub = { submissionId: existing.submission_id, existed: true };
      else {
        // The job input holds the validated RunConfig as a plain record (job.ts); only compute is read here. It is
        // recorded on the run before anything can fail (the package upload, the submission, the job itself).
        const given = (input.config as unknown as Pick<RunConfig, 'compute'>).compute;
        const compute = resolveRayCompute(given);
        opts.onCompute?.(submittedBackend(given, client.url));
        const pkg = await ensureLabPackage(client);
        const config = { ...input.config, compute };
        sub = await client.submitJob({
          submissionId: input.runId,
          entrypoint: LAB_ENTRYPOINT,
          runtimeEnv: {
            working_dir: pkg.uri,
            env_vars: { ARLARENA_LINE_PROTOCOL: '1', [RUN_CONFIG_ENV]: JSON.stringify(config), [RUN_ID_ENV]: input.runId },
          },
          // The compute the job was submitted with, on the job itself (Ray's job list shows it).
          metadata: { arlarena_run: input.runId, arlarena_compute: `${compute.backend} / ${compute.rolloutEngine} / K=${compute.workers}` },
          entrypointNumCpus: compute.workers,
        });
      }
      opts.onSubmitted?.(sub.submissionId, sub.existed);
      let done: JobResult | null = null;
      let failed: string | null = null;
      /** The last step stored: `from` when resumed, none yet on a fresh run (whose first row may be step 0). */
      let lastStep: number | null = resume ? from : null;
      /** Set when a file failed its check: no later line is handled, so nothing after it is written. */
      let refused: TransitError | null = null;
      /** Set when any other line could not be used (a gap in the steps, a protocol line that does not parse). */
      let broken: Error | null = null;
      /**
       * A protocol line that does not parse. If it is the job's last protocol line, the job was killed while writing
       * it (other output, such as the shell's "Killed", may end that line), and the run fails saying so. If a
       * protocol line follows it, the log lost data.
       */
      let cut: { type: string; chars: number } | null = null;
      const onLine = async (line: string): Promise<void> => {
        if (refused) return;
        let m: ReturnType<typeof decodeLine>;
        try {
          m = decodeLine(line);
        } catch (e) {
          if (cut) throw e;
          cut = { type: /@arlarena:(\w+)/.exec(line)?.[1] ?? 'protocol', chars: line.length };
          return;
        }
        if (!m) return;
        if (cut)
          throw new Error(`a ${cut.type} line of the job's log is not valid JSON and the job went on writing after it: the log lost data`);
        switch (m.type) {
          case 'metric': {
            const rec = m.body as MetricRecord;
            // The trainer reports every step once, in order: step 0 first when it validates before training, then
            // 1, 2, …; steps up to `from` are in the store already. The follow hands on each log line once
            // (logFollow.ts); this second check, by step number, keeps a step from being stored twice and refuses a
            // gap, which would mean the log tail lost data.
            if (lastStep !== null && rec.step <= lastStep) return;
            const next = lastStep === null ? (rec.step === 0 ? 0 : 1) : lastStep + 1;
            if (rec.step !== next)
              throw new Error(
                `the job's log went from step ${lastStep ?? 0} to step ${rec.step}: steps are missing from the log tail, so the run is not continued from it`,
              );
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
          (line) =>
            onLine(line).catch((e: unknown) => {
              if (e instanceof TransitError) refused ??= e;
              else broken ??= e instanceof Error ? e : new Error(String(e));
              throw e;
            }),
          async () => (await hooks.checkControl()) === 'stop',
        );
      } catch (e) {
        // Set inside the line callback, which TypeScript's narrowing does not see.
        const why = refused as TransitError | null;
        const lost = broken as Error | null;
        if (lost && !why) {
          // The log cannot be trusted past this line (steps missing, a torn protocol line): the job's further
          // output would not be taken either, so it is stopped rather than left running for nobody.
          await client.stopJob(sub.submissionId).catch(() => undefined);
          throw new Error(
            `${lost.message}. The Ray job ${sub.submissionId} was stopped and the run is marked failed (the steps stored before this line are complete)`,
          );
        }
        if (!why) throw e;
        // The job would go on producing files the lab no longer takes: stop it, and fail the run saying why.
        await client.stopJob(sub.submissionId).catch(() => undefined);
        throw new Error(
          `${why.message}. The Ray job ${sub.submissionId} was stopped and the run is marked failed (what it stored before this file had verified)`,
        );
      }
      const { info, lastLines } = followed;
      const tailText = lastLines.length ? `; its last log lines:\n${lastLines.join('\n')}` : '';
      const cutOff = cut as { type: string; chars: number } | null;
      if (cutOff)
        throw new Error(
          `Ray job ${sub.submissionId} ended ${info.status} while writing a ${cutOff.type} line (cut off after ${cutOff.chars} characters, not used); the steps stored before it are complete${tailText}`,
        );
      if (failed) throw new Error(`the run failed on Ray (job ${sub.submissionId}): ${failed}`);
      if (done) return done;
      if (info.status === 'STOPPED') return { status: 'stopped', step: lastStep ?? from };
      throw new Error(
        `Ray job ${sub.submissionId} ended ${info.status}${info.message ? ` (${info.message.trim().split('\n').pop()})` : ''} without the trainer reporting an end${tailText}`,
      );
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
          // The compute it is submitted with goes on the run record at once (SessionManager: 'compute').
          job: rayTrainingJob(client, { ...opts, onCompute: (backend) => deliver({ type: 'compute', backend }) }),
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
          deliver({
            type: 'status',
            phase: lastStatus?.phase ?? 'rl',
            step: lastStatus?.step ?? 0,
            totalSteps: lastStatus?.totalSteps ?? 0,
            message: pauseNote,
          });
        } else if (control) control.handle(msg);
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
