/**
 * Training sessions: every run in its own worker, a queue with a concurrency limit, pause/resume/stop, live
 * events, crash handling and start-up recovery.
 *
 * Ownership of files: the worker is the single writer of its run's streams (metrics.jsonl, trajectories.jsonl,
 * checkpoints/); this manager (main thread) is the single writer of run records and the catalog — it folds the
 * worker's reports into the record (step, summary, alerts, status). Events go out through the event bus,
 * throttled at the source: per run at most one `run.metrics` batch (all records since the last one), one
 * progress `session.status`, and the latest version of each changed alert per tick (default 250 ms → ≤ 4/s).
 * Status transitions (paused, completed, failed…) go out at once, after flushing that run's pending batch.
 */
import { availableParallelism } from 'node:os';
import { detectComputeBackend } from '../compute/detect';
import { applyTensorflowEnv } from '../compute/tensorflow';
import { validateConfig } from '../../core/config/validate';
import {
  SessionPhase,
  type ComputeBackendInfo,
  type Alert,
  type ApiEventName,
  type ApiEventPayload,
  type RunStatus,
  type SessionInfo,
} from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';
import { toWireRecord } from '../../shared/nonFinite';
import type { DetectorConfigOverrides } from '../../core/stability/config';
import type { CreateRunInput, RunStore } from '../store/runStore';
import { diskFullMessage, isDiskFull } from '../store/storageErrors';
import type { WorkerToHost } from './protocol';
import { threadWorkerSpawner, type SpawnWorker, type WorkerHandle } from './workerHost';

export type EmitFn = <E extends ApiEventName>(event: E, payload: ApiEventPayload<E>) => void;

export class SessionError extends Error {
  /** The CLI prints this as one line (it is about the request, not a bug). */
  readonly expected = true;
  constructor(
    readonly code: 'NOT_FOUND' | 'CONFLICT' | 'VALIDATION',
    message: string,
  ) {
    super(message);
    this.name = 'SessionError';
  }
}

export interface SessionManagerOptions {
  readonly store: RunStore;
  /** The event bus's `emit` (src/main/app/events.ts). */
  readonly emit?: EmitFn;
  /** Runs training at once; default: half the cores, at least 1 (1 on a 2-core laptop). */
  readonly concurrency?: number;
  readonly spawn?: SpawnWorker;
  /**
   * The spawner for one run, chosen from its tags when it launches (a run tagged for a Ray cluster trains there,
   * src/main/remote/computeTarget.ts targetOfRun); undefined = `spawn`. Lets one manager run local and Ray runs.
   */
  readonly spawnForRun?: (tags: readonly string[]) => Promise<SpawnWorker | undefined>;
  /**
   * The check a run's config must pass before it trains (default: the trainer's validateConfig). A test kit
   * that spawns a stand-in job passes that job's own check with its spawner.
   */
  readonly validateConfig?: (config: Record<string, unknown>) => ReadonlyArray<{ readonly message: string }>;
  readonly detector?: DetectorConfigOverrides;
  /** Event throttle tick (ms). Default 250. */
  readonly throttleMs?: number;
  /** Worker fsync interval (ms). Default 1000. */
  readonly flushMs?: number;
  /** On dispose, how long a stopping run may take before its worker is terminated (ms). Default 10 s. */
  readonly stopTimeoutMs?: number;
  /** Which compute backends this machine has, without loading them (tests inject one). */
  readonly detectBackends?: () => ComputeBackendInfo;
  /**
   * The clock of a run's running seconds (epoch ms; default Date.now). Tests inject one so that what they check of
   * the elapsed time does not depend on how long a loaded machine takes between two lines.
   */
  readonly now?: () => number;
}

/** Where a manager's runs train and what their configs must pass: the trainer by default, a test kit's stand-in. */
export type TrainingJobs = Pick<SessionManagerOptions, 'spawn' | 'validateConfig'>;

interface Session {
  readonly runId: string;
  status: RunStatus;
  step: number;
  totalSteps: number;
  handle: WorkerHandle | null;
  resume: boolean;
  pendingMetrics: MetricRecord[];
  pendingTrajectories: Array<{ step: number; trajUid: string }>;
  pendingAlerts: Map<string, Alert>;
  progressDirty: boolean;
  /** The trainer's last reported phase and its one-line progress (BC updates during the warm start). */
  phase: SessionPhase;
  detail: string | null;
  /** Control asked for while the worker was being started (delivered right after its start message). */
  pendingControl: 'pause' | 'stop' | null;
  /** Last step the worker reported as fsynced (what survives a crash for sure). */
  flushedStep: number;
  /** Running seconds before the current stretch (earlier sessions' training wall time, earlier stretches). */
  elapsedBefore: number;
  /** When the current running stretch began (ms since the epoch); null while not running. */
  runningSince: number | null;
  /** Stop was asked for: reported at once, while the worker finishes what it is doing. */
  stopping: boolean;
  finished: boolean;
  /** Why the run ended when its record could not say so (the disk filled up): what waiters and the CLI report. */
  finalError: string | null;
  waiters: Array<() => void>;
}

const SESSION_PHASES = SessionPhase.unwrap().options;
const STOPPING = 'stopping… (after the work in progress)';

/** Opens or closes the running stretch when the status changes (the elapsed clock counts running time only). */
function trackRunning(s: Session, now: number): void {
  if (s.status === 'running' && s.runningSince === null) s.runningSince = now;
  else if (s.status !== 'running' && s.runningSince !== null) {
    s.elapsedBefore += (now - s.runningSince) / 1000;
    s.runningSince = null;
  }
}

function elapsedOf(s: Session, now: number): number {
  return s.elapsedBefore + (s.runningSince === null ? 0 : (now - s.runningSince) / 1000);
}
const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'stopped', 'interrupted'];
const MAX_TRAJ_NOTICES_PER_TICK = 16;
/** Event ticks between looks for a stop request file (4 × 250 ms). */
const STOP_POLL_TICKS = 4;

export function defaultConcurrency(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

export class SessionManager {
  readonly concurrency: number;
  private sessions = new Map<string, Session>();
  private queue: string[] = [];
  private active = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly emit: EmitFn;
  private readonly spawn: SpawnWorker;
  private readonly now: () => number;
  private disposed = false;

  constructor(private readonly opts: SessionManagerOptions) {
    this.concurrency = Math.max(1, opts.concurrency ?? defaultConcurrency());
    this.emit = opts.emit ?? (() => undefined);
    this.spawn = opts.spawn ?? threadWorkerSpawner();
    this.now = opts.now ?? Date.now;
  }

  get store(): RunStore {
    return this.opts.store;
  }

  /** Start-up recovery: runs a dead process left running/paused/queued become `interrupted` (resumable). */
  async recover(): Promise<string[]> {
    const ids = await this.store.markInterrupted();
    for (const id of ids) this.emit('runs.changed', { runId: id });
    return ids;
  }

  /** Create a run record and queue it (a forced compute backend the machine lacks is refused first). */
  async startNew(input: CreateRunInput): Promise<SessionInfo> {
    this.checkBackend(input.config);
    const rec = await this.store.createRun({ ...input, status: 'queued' });
    this.emit('runs.changed', { runId: rec.id });
    return this.submit(rec.id, false);
  }

  /** Queue an existing run (fresh, or `resume` from its latest checkpoint). */
  async submit(runId: string, resume: boolean): Promise<SessionInfo> {
    if (this.disposed) throw new SessionError('CONFLICT', 'the session manager is shutting down');
    const rec = await this.store.getRun(runId);
    if (!rec) throw new SessionError('NOT_FOUND', `no run with id "${runId}"`);
    if (rec.kind === 'imported') {
      throw new SessionError(
        'CONFLICT',
        `run ${runId} was imported from a ${rec.source?.format ?? 'training'} log, not trained in this lab: it cannot be resumed or trained here (to read the log again: arlarena import --again ${rec.source?.paths[0] ?? 'PATH'})`,
      );
    }
    const existing = this.sessions.get(runId);
    if (existing && !existing.finished && existing.handle) throw new SessionError('CONFLICT', `run ${runId} is already ${existing.status}`);
    // Claimed as it enters the queue, not only when its worker launches: a run waiting here (or paused here before it
    // started) had no owner file, so another process on this data dir — a second app or `arlarena serve` starting
    // (recover), a study's resume, any CLI command for a paused one — took it for a dead process's and marked it
    // interrupted, and a resume there trained it beside this process, which still launched it in its turn.
    // Under the data dir's lock, refused when another live process claimed it since resume looked (two resuming it).
    const holder = await this.store.claimRunIfFree(runId);
    if (holder !== null)
      throw new SessionError(
        'CONFLICT',
        `run ${runId} was just taken by another process (pid ${holder}): it trains there; stop it there, or with arlarena stop ${runId}, to resume it here`,
      );
    // Checked again after that wait: a second submit of the run (two resumes at once) passed the check above too,
    // and once the first was launched meanwhile it queued the run again, a second worker writing the same run.
    const current = this.sessions.get(runId);
    if (current && current !== existing && !current.finished)
      throw new SessionError('CONFLICT', `run ${runId} is already ${current.status}`);
    const s: Session = {
      runId,
      status: 'queued',
      step: rec.step,
      totalSteps: rec.totalSteps,
      handle: null,
      resume,
      pendingMetrics: [],
      pendingTrajectories: [],
      pendingAlerts: new Map(),
      progressDirty: false,
      phase: null,
      detail: null,
      pendingControl: null,
      flushedStep: 0,
      elapsedBefore: rec.wallSeconds,
      runningSince: null,
      stopping: false,
      finished: false,
      finalError: null,
      waiters: existing?.waiters ?? [],
    };
    this.sessions.set(runId, s);
    if (!this.queue.includes(runId)) this.queue.push(runId);
    await this.setStatus(s, 'queued', { error: null, finishedAt: null });
    this.pump();
    return this.info(s);
  }

  async pause(runId: string): Promise<SessionInfo> {
    const s = this.live(runId);
    if (s.status === 'paused') return this.info(s);
    const handle = s.handle;
    if (!handle) {
      if (!this.queue.includes(runId))
        s.pendingControl = 'pause'; // its worker is starting
      else this.queue = this.queue.filter((id) => id !== runId); // a queued run is held back until resumed
    }
    await this.setStatus(s, 'paused');
    // Posted once the run is marked paused: a target that cannot pause (a Ray job) answers 'resumed' at once, and
    // that answer must find the run paused to set it running again. Posted first, the answer could be handled
    // while setStatus was still flushing events, and the run stayed "paused" with its steps arriving (ray.test.ts).
    handle?.post({ type: 'pause' });
    return this.info(s);
  }

  async resume(runId: string): Promise<SessionInfo> {
    const s = this.sessions.get(runId);
    if (s && !s.finished) {
      if (s.status !== 'paused') throw new SessionError('CONFLICT', `run ${runId} is ${s.status}, not paused`);
      if (s.handle) {
        s.handle.post({ type: 'resume' });
        await this.setStatus(s, 'running');
      } else if (s.pendingControl === 'pause') {
        s.pendingControl = null; // paused while its worker was starting: just cancel that
        await this.setStatus(s, 'running');
      } else {
        if (!this.queue.includes(runId)) this.queue.push(runId);
        await this.setStatus(s, 'queued');
        this.pump();
      }
      return this.info(s);
    }
    const rec = await this.store.getRun(runId);
    if (!rec) throw new SessionError('NOT_FOUND', `no run with id "${runId}"`);
    if (rec.status === 'completed') throw new SessionError('CONFLICT', `run ${runId} is completed; start a new run instead`);
    if (rec.status === 'running' || rec.status === 'queued') {
      // On a full disk the run a dead process left could not be marked interrupted (RunStore.markDeadOwners), so
      // its record still reads running though nothing trains it: say what is in the way, not "another process".
      if (rec.status === 'running' && this.store.diskFull && !(await this.store.ownedElsewhere(runId))) {
        const checkpoints = await this.store.checkpointSteps(runId).catch(() => [] as number[]);
        throw new SessionError(
          'CONFLICT',
          `run ${runId} still reads running, but the process that trained it is gone: the disk holding the data folder ${this.store.dataDir} is full, so it could not be marked or trained. Free space there, then resume it (${checkpoints.length > 0 ? `from its checkpoint at step ${checkpoints[checkpoints.length - 1]}` : 'it has no checkpoint: there is nothing to resume from, so it trains again from the start'})`,
        );
      }
      const owner = await this.store.ownerOf(runId);
      throw new SessionError(
        'CONFLICT',
        `run ${runId} is ${rec.status} in another process (pid ${owner?.pid ?? '?'}): stop it there, or with arlarena stop ${runId}, then resume it`,
      );
    }
    // Paused (or left in any state) by a process that still lives and owns it — the app paused it, its worker
    // waits: that process resumes or stops it, and a stop request left for it is its own.
    if (await this.store.ownedElsewhere(runId)) {
      const owner = await this.store.ownerOf(runId);
      throw new SessionError(
        'CONFLICT',
        `run ${runId} is ${rec.status} in another process (pid ${owner?.pid ?? '?'}): resume it there, or stop it (arlarena stop ${runId}) and resume it then`,
      );
    }
    // interrupted, stopped, failed, or paused by a process that died: continue from the latest checkpoint.
    // An imported run's config came from a file: it trains only if it validates like a new run's (9).
    if (rec.tags.includes('imported')) {
      const issues = (this.opts.validateConfig ?? validateConfig)(rec.config);
      if (issues.length > 0)
        throw new SessionError(
          'VALIDATION',
          `run ${runId} was imported with a config that is not a valid run config (${issues
            .slice(0, 2)
            .map((i) => i.message)
            .join('; ')}); it can be viewed but not trained`,
        );
    }
    // A stop request still here was for the process that trained it before (`arlarena stop` asked; that process
    // was killed before its next poll took it, e.g. at a session's end): this resume is asked after it, and would
    // otherwise stop at its first poll.
    await this.store.takeStopRequest(runId);
    return this.submit(runId, true);
  }

  async stop(runId: string): Promise<SessionInfo> {
    const s = this.live(runId);
    if (s.handle) {
      s.handle.post({ type: 'stop' });
      // The worker stops at its next control check; say so now rather than after the step in progress.
      s.stopping = true;
      this.emitStatus(s, null);
      return this.info(s);
    }
    if (!this.queue.includes(runId) && s.status !== 'paused') {
      s.pendingControl = 'stop'; // its worker is starting; it stops after its first control check
      return this.info(s);
    }
    this.queue = this.queue.filter((id) => id !== runId);
    await this.finish(s, 'stopped', {});
    return this.info(s);
  }

  /** Every run this manager has trained or is training, finished ones included: its events announced them. */
  runIds(): string[] {
    return [...this.sessions.keys()];
  }

  list(): SessionInfo[] {
    return [...this.sessions.values()].filter((s) => !s.finished).map((s) => this.info(s));
  }

  /** Resolves when the run reaches a terminal status in this manager. */
  waitFor(runId: string): Promise<RunStatus> {
    const s = this.sessions.get(runId);
    if (!s) return Promise.reject(new SessionError('NOT_FOUND', `no session for run "${runId}"`));
    if (s.finished) return Promise.resolve(s.status);
    return new Promise((resolve) => s.waiters.push(() => resolve(s.status)));
  }

  /** Stop every run (waiting up to stopTimeoutMs, then terminating and marking it interrupted). */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const id of this.queue) {
      const s = this.sessions.get(id);
      if (s) await this.finish(s, 'interrupted', { error: 'The app closed before this queued run started.' });
    }
    this.queue = [];
    const running = [...this.sessions.values()].filter((s) => s.handle && !s.finished);
    await Promise.all(
      running.map(async (s) => {
        s.handle?.post({ type: 'stop' });
        const done = this.waitFor(s.runId);
        const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), this.opts.stopTimeoutMs ?? 10_000).unref());
        if ((await Promise.race([done, timeout])) === 'timeout') {
          const h = s.handle;
          await this.finish(s, 'interrupted', {
            error: 'The app closed while this run was stopping; resume continues from its last checkpoint.',
          });
          await h?.terminate();
        }
      }),
    );
    this.stopTimer();
  }

  // ------------------------------------------------------------------------------------------------------

  /**
   * compute.backend other than auto must be present here, checked by looking (compute/detect.ts: no libtensorflow
   * is loaded), before a run record exists: otherwise the worker fails at start and leaves a failed run behind.
   */
  private checkBackend(config: Record<string, unknown>): void {
    const compute = config.compute;
    const wanted = compute !== null && typeof compute === 'object' ? (compute as { backend?: unknown }).backend : undefined;
    if (typeof wanted !== 'string' || wanted === 'auto') return;
    const info = (this.opts.detectBackends ?? detectComputeBackend)();
    if (info.available.includes(wanted)) return;
    throw new SessionError(
      'VALIDATION',
      `compute.backend = "${wanted}" is not available on this machine (${info.detail}); available: ${info.available.join(', ') || 'none'}. Use compute.backend=auto or one of those; no run was created.`,
    );
  }

  private live(runId: string): Session {
    const s = this.sessions.get(runId);
    if (!s || s.finished)
      throw new SessionError(
        s ? 'CONFLICT' : 'NOT_FOUND',
        s ? `run ${runId} is not active (${s.status})` : `no active session for run "${runId}"`,
      );
    return s;
  }

  private info(s: Session): SessionInfo {
    const qi = this.queue.indexOf(s.runId);
    const rec = this.store.cached(s.runId);
    return {
      runId: s.runId,
      status: s.status,
      step: s.step,
      totalSteps: s.totalSteps,
      etaSeconds: rec?.etaSeconds ?? null,
      elapsedSeconds: elapsedOf(s, this.now()),
      queuePosition: qi >= 0 ? qi + 1 : null,
      phase: s.phase,
      detail: s.stopping && !s.finished ? STOPPING : s.detail,
    };
  }

  private pump(): void {
    while (!this.disposed && this.active < this.concurrency && this.queue.length > 0) {
      const id = this.queue.shift()!;
      const s = this.sessions.get(id);
      if (!s || s.finished || s.status !== 'queued') continue;
      this.active++;
      void this.launch(s).catch(async (e: Error) => {
        await this.finish(s, 'failed', { error: `could not start the training worker: ${e.message}` });
      });
    }
  }

  private async launch(s: Session): Promise<void> {
    const rec = await this.store.getRun(s.runId);
    if (!rec) throw new Error(`run ${s.runId} vanished`);
    const spawn = (await this.opts.spawnForRun?.(rec.tags)) ?? this.spawn;
    await this.store.claimRun(s.runId);
    // Native TensorFlow reads its process settings (threads, deterministic ops, log level) from the environment once,
    // and a worker thread's process.env never reaches native code: write them here, on the main thread, before the
    // run's thread can load it. The first run in a process that loads TensorFlow fixes them; each run records them.
    const compute = (rec.config as { compute?: { intraOpThreads?: number; interOpThreads?: number } }).compute;
    applyTensorflowEnv({ intraOpThreads: compute?.intraOpThreads, interOpThreads: compute?.interOpThreads });
    const handle = spawn(s.runId);
    s.handle = handle;
    this.startTimer();
    handle.onMessage((m) => {
      void this.onWorkerMessage(s, m).catch((e: Error) => this.onStoreError(s, e));
    });
    handle.onExit(({ error }) => {
      if (s.finished) return;
      // No done/failed message: the worker crashed. Everything it flushed stays on disk.
      void this.finish(s, 'failed', {
        error: `the training worker crashed: ${error ?? 'it exited without reporting'}; metrics are kept up to step ${s.flushedStep} (its last flush) or later`,
      });
    });
    handle.post({
      type: 'start',
      runId: s.runId,
      runDir: this.store.runDir(s.runId),
      dataDir: this.store.dataDir,
      config: rec.config,
      seed: rec.seed,
      resume: s.resume,
      detector: this.opts.detector,
      flushMs: this.opts.flushMs,
    });
    const control = s.pendingControl;
    s.pendingControl = null;
    if (control) handle.post({ type: control });
    await this.setStatus(s, control === 'pause' ? 'paused' : 'running', {
      startedAt: rec.startedAt ?? new Date().toISOString(),
      error: null,
    });
  }

  private async onWorkerMessage(s: Session, m: WorkerToHost): Promise<void> {
    if (s.finished) return;
    switch (m.type) {
      case 'ready':
        return;
      case 'checkpoint':
      case 'flushed':
        s.flushedStep = Math.max(s.flushedStep, m.step);
        return;
      case 'started':
        s.flushedStep = m.fromStep;
        if (s.resume) {
          s.step = m.fromStep;
          // The job kept the stream up to its checkpoint and feeds its detector again from there: steps an earlier
          // attempt logged after it are gone, and so is their reading.
          await this.store.updateRun(s.runId, { step: m.fromStep, detectedThrough: m.fromStep });
        }
        return;
      case 'metrics':
        s.pendingMetrics.push(...m.records);
        s.step = Math.max(s.step, m.records[m.records.length - 1]?.step ?? s.step);
        // Metric records are RL steps: a job whose first RL status comes after its first metrics (the throttled
        // flush may fall in between) must not be reported as still behaviour-cloning at step 1.
        if (s.phase === 'warmstart' && m.records.length > 0) {
          s.phase = 'rl';
          s.detail = null;
        }
        s.progressDirty = true;
        // The job fed each record to its live detector as it posted it (jobRunner.ts).
        await this.store.noteMetrics(s.runId, m.records, { detected: true });
        return;
      case 'trajectory':
        s.pendingTrajectories.push({ step: m.step, trajUid: m.trajUid });
        if (s.pendingTrajectories.length > MAX_TRAJ_NOTICES_PER_TICK) s.pendingTrajectories.shift();
        return;
      case 'alert':
        s.pendingAlerts.set(m.alert.id, m.alert);
        return;
      case 'status': {
        const phase = SESSION_PHASES.find((p) => p === m.phase) ?? null;
        if (phase === 'warmstart') {
          // BC updates are not RL steps: report them as the detail line, keep step/totalSteps for RL.
          s.detail =
            m.totalSteps > 0
              ? `behaviour cloning: update ${m.step} / ${m.totalSteps}${m.message ? ` (${m.message})` : ''}`
              : (m.message ?? 'warm start');
        } else if (phase === 'rl' || phase === 'done') {
          s.step = m.step;
          s.totalSteps = m.totalSteps;
          s.detail = m.message ?? null;
        } else if (phase === 'validation') {
          s.detail = `validating at step ${m.step}`;
        }
        s.phase = phase ?? s.phase;
        s.progressDirty = true;
        return;
      }
      case 'paused':
        if (s.status !== 'paused') await this.setStatus(s, 'paused');
        return;
      case 'resumed':
        if (s.status !== 'running') await this.setStatus(s, 'running');
        return;
      case 'compute':
        // Recorded at once: a run that fails before its end is reported (a Ray job that dies) keeps what it ran on.
        await this.store.updateRun(s.runId, { backend: { ...m.backend, available: [] } });
        return;
      case 'model':
        // Recorded once the job has read the folder: a Hugging Face run that fails before its end still names its model.
        await this.store.updateRun(s.runId, { model: m.model });
        return;
      case 'done':
        s.step = m.step;
        await this.finish(s, m.status, {
          ...(m.backend ? { backend: { ...m.backend, available: [] } } : {}),
          ...(m.model ? { model: m.model } : {}),
        });
        return;
      case 'failed':
        await this.finish(s, 'failed', { error: m.error });
        return;
    }
  }

  private async flushEvents(s: Session): Promise<void> {
    if (s.pendingMetrics.length > 0) {
      const records = s.pendingMetrics.splice(0).map(toWireRecord);
      this.emit('run.metrics', { runId: s.runId, records });
    }
    for (const t of s.pendingTrajectories.splice(0)) this.emit('run.trajectory', { runId: s.runId, step: t.step, trajUid: t.trajUid });
    if (s.pendingAlerts.size > 0) {
      const alerts = [...s.pendingAlerts.values()];
      s.pendingAlerts.clear();
      // Emit the stored copies: the detector keeps extending an alert under the same id, and its fresh copy
      // says acknowledged=false even after the user acknowledged it; the store's merge keeps the acknowledgement.
      const rec = await this.store.upsertAlerts(s.runId, alerts);
      const stored = new Map(rec.alerts.map((a) => [a.id, a]));
      for (const a of alerts) this.emit('run.alert', { runId: s.runId, alert: stored.get(a.id) ?? a });
    }
    if (s.progressDirty) {
      s.progressDirty = false;
      this.emitStatus(s, null);
    }
  }

  private emitStatus(s: Session, error: string | null): void {
    const i = this.info(s);
    this.emit('session.status', {
      runId: s.runId,
      status: s.status,
      step: s.step,
      totalSteps: s.totalSteps,
      etaSeconds: i.etaSeconds,
      elapsedSeconds: i.elapsedSeconds,
      error,
      phase: s.phase,
      detail: i.detail,
    });
  }

  private async setStatus(s: Session, status: RunStatus, extra: Record<string, unknown> = {}): Promise<void> {
    await this.flushEvents(s);
    s.status = status;
    trackRunning(s, this.now());
    await this.store.updateRun(s.runId, { status, ...extra });
    this.emitStatus(s, (extra.error as string | null | undefined) ?? null);
  }

  /**
   * Storing what the worker sent failed. A full disk ends the run (failed, naming the data folder): the worker is
   * told to stop and the waiters are answered, rather than training on into writes that cannot land and leaving
   * `train` waiting for ever. Anything else is logged and the run goes on.
   */
  private onStoreError(s: Session, e: Error): void {
    if (!isDiskFull(e)) {
      console.error(`[sessions] ${s.runId}: ${e.message}`);
      return;
    }
    if (s.finished) return;
    s.handle?.post({ type: 'stop' });
    void this.finish(s, 'failed', { error: diskFullMessage(this.store.dataDir, 'storing its metrics') });
  }

  /** How a run this manager ran ended, with the reason its record may lack (null: not finished here). */
  outcome(runId: string): { status: RunStatus; error: string | null } | null {
    const s = this.sessions.get(runId);
    return s?.finished ? { status: s.status, error: s.finalError } : null;
  }

  private async finish(s: Session, status: RunStatus, extra: Record<string, unknown>): Promise<void> {
    if (s.finished) return;
    s.finished = true;
    const hadHandle = s.handle !== null;
    // A worker that failed on a full disk reports the bare ENOSPC: say which folder is full.
    if (typeof extra.error === 'string' && isDiskFull(extra.error) && !extra.error.startsWith('the disk holding'))
      extra = { ...extra, error: diskFullMessage(this.store.dataDir, 'training wrote its files') };
    s.finalError = (extra.error as string | null | undefined) ?? null;
    try {
      await this.flushEvents(s);
    } catch {
      // Events only; the record below matters.
    }
    s.status = status;
    trackRunning(s, this.now());
    try {
      await this.store.updateRun(s.runId, { status, step: s.step, finishedAt: new Date().toISOString(), etaSeconds: null, ...extra });
      await this.store.flush(s.runId);
    } catch (e) {
      // The record cannot be written (the disk is full): the waiters still get the outcome, with the reason; a
      // later start marks the run interrupted.
      if (!isDiskFull(e)) console.error(`[sessions] ${s.runId}: its final record could not be written: ${(e as Error).message}`);
      s.finalError ??= isDiskFull(e)
        ? diskFullMessage(this.store.dataDir, 'recording how the run ended')
        : `its final record could not be written: ${(e as Error).message}`;
    }
    await this.store.releaseRun(s.runId).catch(() => undefined);
    this.emitStatus(s, s.finalError);
    this.emit('runs.changed', { runId: s.runId });
    const h = s.handle;
    s.handle = null;
    if (hadHandle) {
      this.active--;
      setTimeout(() => void h?.terminate(), 200).unref();
    }
    for (const w of s.waiters.splice(0)) w();
    if (TERMINAL.includes(status)) this.pump();
    // Kept while a run paused before its worker started is held here: `arlarena stop` of it is taken by the timer.
    if (this.active === 0 && this.queue.length === 0 && [...this.sessions.values()].every((x) => x.finished)) this.stopTimer();
  }

  private startTimer(): void {
    if (this.timer) return;
    let tick = 0;
    this.timer = setInterval(() => {
      // About once a second: has `arlarena stop RUN` (another process) asked for one of our runs to stop?
      const checkStops = tick++ % STOP_POLL_TICKS === 0;
      for (const s of this.sessions.values()) {
        if (s.finished) continue;
        void this.flushEvents(s).catch((e: Error) => this.onStoreError(s, e));
        if (checkStops) {
          void this.store
            .takeStopRequest(s.runId)
            .then((asked) => (asked && !s.finished ? this.stop(s.runId) : undefined))
            .catch(() => undefined);
        }
      }
    }, this.opts.throttleMs ?? 250);
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
