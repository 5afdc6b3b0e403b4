/**
 * Runs a study's plan (or a one-off arena): trains each planned run into the run store — fresh, or
 * continued from its latest checkpoint when a killed study left it unfinished — then evaluates its final
 * policy on the held-out tasks greedy and sampled, and reduces its metric stream to the figures the
 * arena's statistics need (src/core/stats). Everything it records is a function of (config, seed): the
 * held-out evaluation uses fixed task seeds and a seeded sampler, and alerts come from the detector run
 * over the stored metrics, so a resumed study reports exactly what an uninterrupted one does.
 */
import type { RunConfig } from '../../../core/config/index';
import { heldOutSeeds } from '../../../core/envs/index';
import { firstCriticalStep, trainingOutcome, type ArenaRunOutcome } from '../../../core/stats/index';
import { detectAlerts } from '../../../core/stability/detector';
import { recipeOf } from '../../../core/stability/hints';
import { evaluatePolicy } from '../../../core/training/evaluate';
import { envSpecOf, policyFromCheckpoint } from '../../../core/training/trainer';
import { Rng, hashSeed } from '../../../core/util/rng';
import type { RunRecord } from '../../../shared/api';
import type { MetricRecord } from '../../../shared/metrics';
import type { WireMetricRecord } from '../../../shared/nonFinite';
import { setupCompute, silenceTfjsBanner } from '../../compute/index';
import { SessionManager, type TrainingJobs } from '../../sessions/sessionManager';
import { RunStore, type StoredCheckpoint } from '../../store/index';
import { stopWatcher, trainInStore, type Progress, type StopWhen } from '../trainRun';
import type { ComputeTarget } from '../../remote/computeTarget';
import { CollapseWatch, collapseStopStep } from './collapseWatch';
import { writeStudy, type StudyEntry, type StudyState } from './studyFiles';

export interface StudyRunOptions {
  readonly dataDir: string;
  /** Mutated in place: run ids, statuses and outcomes are filled in as the study goes. */
  readonly state: StudyState;
  /** Write study.json after every change (arena --study); false for a one-off arena. */
  readonly persist: boolean;
  /** Where local runs train (default: the real trainer; test kits pass theirs). */
  readonly jobs?: TrainingJobs;
  readonly configOf: (e: StudyEntry) => RunConfig;
  readonly log: (line: string) => void;
  readonly onProgress?: (runId: string, p: Progress) => void;
  readonly onEntry?: (e: StudyEntry) => void;
  /** Runs trained at the same time (each in its own training worker); default 1. */
  readonly parallel?: number;
  /** Where the runs train (arena --on: a Ray cluster); default this machine. */
  readonly target?: ComputeTarget;
}

/** Held-out success of a checkpoint at each temperature, on the first `episodes` fixed held-out tasks. */
async function heldOutSuccess(
  config: RunConfig,
  ck: StoredCheckpoint,
  episodes: number,
  temperatures: readonly number[],
): Promise<number[]> {
  silenceTfjsBanner();
  const compute = await setupCompute({ backend: config.compute.backend, rolloutEngine: config.compute.rolloutEngine });
  const { tok, weights } = policyFromCheckpoint(config, ck);
  const engine = await compute.createRolloutEngine(weights);
  try {
    const out: number[] = [];
    for (const T of temperatures) {
      const { summary } = await evaluatePolicy({
        engine,
        tokenizer: tok,
        spec: envSpecOf(config),
        seeds: heldOutSeeds(episodes),
        temperature: T,
        topP: config.rollout.topP,
        topK: config.rollout.topK,
        maxResponseTokens: config.rollout.maxResponseTokens,
        maxSeqLen: weights.config.maxSeqLen,
        rng: new Rng(hashSeed(config.seed, 'arena-held-out', T, ck.step)),
      });
      out.push(summary.success.rate);
    }
    return out;
  } finally {
    await engine.dispose();
  }
}

/** Marks the runs a dead process left running/paused/queued as interrupted, so they can be resumed. */
async function markDeadRunsInterrupted(dataDir: string): Promise<string[]> {
  const store = await RunStore.open(dataDir);
  try {
    return await store.markInterrupted();
  } finally {
    await store.close();
  }
}

/**
 * Continue an unfinished run (interrupted, stopped or failed) from its latest checkpoint; `stopWhen` sees its new
 * metric records (a stop it asks for is recorded as the run's error line, see trainRun.ts StopWhen).
 */
export async function resumeInStore(
  dataDir: string,
  runId: string,
  onProgress?: (runId: string, p: Progress) => void,
  jobs?: TrainingJobs,
  stopWhen?: StopWhen,
): Promise<RunRecord> {
  const store = await RunStore.open(dataDir);
  const watcher = stopWatcher(stopWhen, (id) => sessions.stop(id));
  const sessions = new SessionManager({
    store,
    concurrency: 1,
    ...jobs,
    emit: (event, payload) => {
      if (event === 'run.metrics') {
        const m = payload as { runId: string; records: WireMetricRecord[] };
        if (m.runId === runId) watcher.onMetrics(runId, m.records);
        return;
      }
      if (event !== 'session.status' || !onProgress) return;
      const s = payload as { runId: string; step: number; totalSteps: number; etaSeconds: number | null };
      if (s.runId === runId)
        onProgress(runId, { step: s.step, totalSteps: s.totalSteps, success: null, gradNorm: null, eta: s.etaSeconds });
    },
  });
  try {
    await sessions.resume(runId);
    await sessions.waitFor(runId);
    await store.flush(runId);
    const rec = await store.getRun(runId);
    if (!rec) throw new Error(`run ${runId} vanished from the store`);
    return (await watcher.settle(store, rec)).record;
  } finally {
    await sessions.dispose();
    await store.close();
  }
}

/**
 * A finished run's outcome. `evaluate` false (a run stopped at its collapse): no held-out evaluation (null), and
 * its steps are the last one it logged — the ladder's statistics use a collapsed run's collapse step, never its
 * end or its held-out success.
 */
async function outcomeOf(
  dataDir: string,
  e: StudyEntry,
  config: RunConfig,
  episodes: number,
  threshold: number,
  evaluate: boolean,
): Promise<{ outcome: ArenaRunOutcome; wallSeconds: number | null }> {
  const store = await RunStore.open(dataDir);
  let ck: StoredCheckpoint | undefined;
  let metrics;
  let rec: RunRecord | undefined;
  try {
    if (evaluate) ck = await store.loadLatestCheckpoint(e.runId!);
    metrics = await store.readMetrics(e.runId!);
    rec = await store.getRun(e.runId!);
  } finally {
    await store.close();
  }
  let greedy: number | null = null;
  let sampled: number | null = null;
  let steps = rec?.step ?? 0;
  if (evaluate) {
    if (!ck) throw new Error(`run ${e.runId} completed without a checkpoint; cannot evaluate it held-out`);
    [greedy, sampled] = await heldOutSuccess(config, ck, episodes, [0, config.training.valTemperature]);
    steps = ck.step;
  } else for (const m of metrics) steps = Math.max(steps, m.step);
  let wall: number | null = null;
  for (const m of metrics) if (Number.isFinite(m.values['perf/wall_s'])) wall = m.values['perf/wall_s'];
  const alerts = detectAlerts(e.runId!, metrics, undefined, recipeOf(config));
  return {
    outcome: {
      env: e.env,
      preset: e.preset,
      seed: e.seed,
      steps,
      heldOutGreedy: greedy,
      heldOutSampled: sampled,
      ...trainingOutcome(metrics, threshold),
      firstCriticalStep: firstCriticalStep(alerts),
    },
    wallSeconds: wall,
  };
}

/**
 * Stop-on-collapse for one run (null when the plan does not ask for it): the watch and, for a run resumed from a
 * checkpoint, the records it had logged up to that checkpoint (what the resumed run continues from).
 */
async function collapseStopper(
  dataDir: string,
  state: StudyState,
  e: StudyEntry,
  config: RunConfig,
  resumed: boolean,
): Promise<{ stopWhen: StopWhen; watch: CollapseWatch } | null> {
  const at = state.plan.stopOnCollapse ?? null;
  if (at === null) return null;
  const watch = new CollapseWatch(e.runId ?? '', config, at.fraction);
  if (resumed && e.runId) {
    const store = await RunStore.open(dataDir);
    let kept: MetricRecord[] = [];
    try {
      const through = Math.max(-1, ...(await store.checkpointSteps(e.runId)));
      kept = (await store.readMetrics(e.runId)).filter((m) => m.step <= through);
    } finally {
      await store.close();
    }
    watch.feed(kept);
  }
  return { watch, stopWhen: (records) => watch.feed(records)?.reason ?? null };
}

/** Record a run as stopped at its collapse without training it further (it collapsed before its checkpoint). */
async function markCollapsed(dataDir: string, runId: string, reason: string): Promise<RunRecord> {
  const store = await RunStore.open(dataDir);
  try {
    return await store.updateRun(runId, { status: 'stopped', error: reason });
  } finally {
    await store.close();
  }
}

/** Train and evaluate every entry without an outcome. Returns true when every run completed. */
export async function runStudy(o: StudyRunOptions): Promise<boolean> {
  const { state } = o;
  // Writes are chained so they land in call order (the run id is saved as soon as the run exists, while
  // it trains, so a kill mid-run leaves a study that knows which run to continue).
  let writes: Promise<void> = Promise.resolve();
  const save = (): Promise<void> => {
    if (!o.persist) return Promise.resolve();
    const snapshot: StudyState = JSON.parse(JSON.stringify(state)) as StudyState;
    writes = writes.then(() => writeStudy(o.dataDir, snapshot));
    return writes;
  };
  const todo = state.entries.filter((e) => !e.outcome);
  // Runs a killed study left "running" are marked interrupted ONCE, before any run of this process starts:
  // the store cannot tell this process's own live runs from a dead one's, so doing it per resume (with
  // --parallel) would interrupt a sibling that is training.
  if (todo.some((e) => e.runId)) await markDeadRunsInterrupted(o.dataDir);
  let k = 0;
  let evaluations: Promise<void> = Promise.resolve();
  const one = async (e: StudyEntry): Promise<void> => {
    const n = ++k;
    const config = o.configOf(e);
    const label = `${e.arm ?? e.preset} · ${e.env} · seed ${e.seed}`;
    let rec: RunRecord | undefined;
    if (e.runId) {
      const store = await RunStore.open(o.dataDir);
      try {
        rec = await store.getRun(e.runId);
      } finally {
        await store.close();
      }
    }
    if (!rec) {
      o.log(`[${n}/${todo.length}] ${label}`);
      const tags = ['arena', ...(o.persist ? [`study:${state.name}`] : [])];
      const stopper = await collapseStopper(o.dataDir, state, e, config, false);
      const trained = await trainInStore(o.dataDir, config, {
        tags,
        ...(o.target ? { target: o.target } : {}),
        ...(o.jobs ? { jobs: o.jobs } : {}),
        ...(stopper ? { stopWhen: stopper.stopWhen } : {}),
        onCreated: (id) => {
          e.runId = id;
          e.status = 'running';
          // a failed write surfaces at the next awaited save (the chain stays rejected)
          save().catch(() => undefined);
        },
        onProgress: o.onProgress,
      });
      rec = trained.record;
    } else if (rec.status === 'stopped' && collapseStopStep(rec.error) !== null) {
      o.log(`[${n}/${todo.length}] ${label}: ${rec.id} was stopped at its collapse (${rec.error})`);
    } else if (rec.status !== 'completed') {
      const stopper = await collapseStopper(o.dataDir, state, e, config, true);
      const before = stopper?.watch.collapse ?? null;
      if (before) {
        o.log(`[${n}/${todo.length}] ${label}: ${rec.id} had collapsed before its latest checkpoint; not resumed`);
        rec = await markCollapsed(o.dataDir, rec.id, before.reason);
      } else {
        o.log(`[${n}/${todo.length}] ${label}: resuming ${rec.id} from its latest checkpoint (was ${rec.status} at step ${rec.step})`);
        rec = await resumeInStore(o.dataDir, rec.id, o.onProgress, o.jobs, stopper?.stopWhen);
      }
    } else {
      o.log(`[${n}/${todo.length}] ${label}: ${rec.id} already trained; evaluating`);
    }
    e.runId = rec.id;
    e.status = rec.status;
    const collapsed = rec.status === 'stopped' && collapseStopStep(rec.error) !== null;
    if (collapsed) e.stopReason = rec.error;
    await save();
    if (rec.status !== 'completed' && !collapsed) {
      o.log(`  ${rec.id} ended ${rec.status}${rec.error ? `: ${rec.error}` : ''}`);
      o.onEntry?.(e);
      return;
    }
    if (collapsed) o.log(`  ${rec.id} stopped: ${rec.error}`);
    // Held-out evaluations run one at a time in this process (they share its compute backend); training
    // of parallel runs goes on in their own workers meanwhile. A run stopped at its collapse is not evaluated.
    const evaluated = evaluations.then(() => outcomeOf(o.dataDir, e, config, state.plan.episodes, state.plan.threshold, !collapsed));
    evaluations = evaluated.then(
      () => undefined,
      () => undefined,
    );
    const { outcome, wallSeconds } = await evaluated;
    e.outcome = outcome;
    e.wallSeconds = wallSeconds;
    await save();
    o.onEntry?.(e);
  };
  let cursor = 0;
  const lane = async (): Promise<void> => {
    while (cursor < todo.length) await one(todo[cursor++]);
  };
  const lanes = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(o.parallel ?? 1, todo.length)) }, lane));
  const failed = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (failed) throw failed.reason;
  return state.entries.every((e) => e.outcome !== null);
}
