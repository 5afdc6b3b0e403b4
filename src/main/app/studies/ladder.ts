/**
 * The pressure ladder study: presets × pressure levels × seeds, each level an ordinary study
 * (`<name>-p<level>`, runs trained and evaluated by runStudy, resumable the same way) whose plan adds
 * `training.pressure = level` to every run. Then, per run, when it collapsed — its first critical alert or the
 * first validation whose held-out success fell below `fraction` × its step-0 validation — and the ladder rows
 * (src/core/stats/ladder.ts): share collapsed, median collapse step, survival, log-rank against the baseline.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PRESSURE_LEVELS, type RunConfig } from '../../../core/config/index';
import { collapseStep, ladderRows, type LadderRow, type LadderRunOutcome } from '../../../core/stats/index';
import { removeDeadTempsIn, writeFileAtomic } from '../../store/atomic';
import { RunStore } from '../../store/index';
import type { ComputeTarget } from '../../remote/computeTarget';
import type { TrainingJobs } from '../../sessions/sessionManager';
import { appVersion } from '../../platform/appInfo';
import type { Progress } from '../trainRun';
import { armSpec, type Arm } from './arms';
import {
  configHash,
  entryOfRecord,
  ledgerHeader,
  ledgerKey,
  outcomeOfRecord,
  recordOf,
  sortRecords,
  writeLedger,
  type Ledger,
  type LedgerBackend,
  type LedgerHeader,
  type LedgerRecord,
} from './ledger';
import { donorLine, findReusable, reusedRecord, reusedSummary, type DonorLedger, type ReusedFrom } from './reuse';
import { runStudy } from './runStudy';
import { readStudy, studiesDir, studyExists, writeStudy, type StudyEntry, type StudyPlan, type StudyState } from './studyFiles';

export interface LadderPlan {
  readonly command: string;
  readonly levels: readonly number[];
  readonly envs: readonly string[];
  readonly presets: readonly string[];
  readonly seeds: readonly number[];
  readonly steps: number | null;
  readonly model: string | null;
  readonly sets: Readonly<Record<string, string | number | boolean>>;
  readonly baseline: string;
  readonly episodes: number;
  /** A run collapsed when held-out success fell below this fraction of its step-0 value (or a critical alert). */
  readonly fraction: number;
  /**
   * Stop each run at its collapse (stored in every level's plan, so --resume keeps it). The statistics are those of
   * the runs trained on: a collapsed run counts at its collapse step either way, and only survivors are evaluated.
   */
  readonly stopOnCollapse: boolean;
  /** Named arms (arms.ts) instead of bare presets: the cells are arms, each compared with its `vs`. */
  readonly arms: readonly Arm[] | null;
}

export interface LadderOptions {
  readonly dataDir: string;
  /** Study name; '' = nothing persisted (levels run as unnamed studies). */
  readonly name: string;
  readonly plan: LadderPlan;
  readonly resume: boolean;
  readonly parallel: number;
  readonly target?: ComputeTarget;
  readonly jobs?: TrainingJobs;
  readonly configOf: (plan: StudyPlan, e: { env: string; preset: string; seed: number; arm?: string }) => RunConfig;
  readonly log: (line: string) => void;
  readonly onProgress?: (runId: string, p: Progress) => void;
  /**
   * Where the ladder keeps its ledger, summary.json and README.md (resources/studies/NAME, or --out): the ledger gets
   * each run as it finishes, the summary and README are rewritten from it after every level. Absent: none (an
   * unnamed ladder).
   */
  readonly reportDir?: string;
  /** The ledger found there before the ladder started, already checked against the plan (checkLedger); null: none. */
  readonly ledger?: Ledger | null;
  /**
   * Other studies' ledgers (reuse.ts readDonorLedgers): an entry with no run yet whose run one of them holds finished
   * (the same config hash, seed, major version, held-out episodes and collapse rule, and the backend and K that
   * `backendOf` says the run would train on here) is taken from there, not trained. Absent or no ledgers: every run
   * trains (`--no-reuse`). Only with a report dir (the ledger keeps the line).
   */
  readonly reuse?: { readonly from: readonly DonorLedger[]; readonly backendOf: (config: RunConfig) => LedgerBackend };
  /**
   * The ledgers that hold the lines of runs this data dir's level studies reused (their entries' reusedFrom), for a
   * ledger that lacks them (LedgerKeeper.restoreReused) — read even with --no-reuse. Absent: reuse's donors.
   */
  readonly donors?: readonly DonorLedger[];
}

export function levelStudyName(name: string, level: number): string {
  return `${name}-p${level}`;
}

/**
 * The study plan of one level of a ladder: the ladder's plan with `training.pressure = level`. Level null: the plan
 * with no level set — what --resume keeps from a ledger's plan (ledger.ts LedgerPlan, the same fields) on a clone
 * whose data dir has no level of the ladder stored.
 */
export function levelPlan(p: Omit<LadderPlan, 'levels'>, level: number | null): StudyPlan {
  return {
    command: p.command,
    envs: [...p.envs],
    presets: [...p.presets],
    seeds: [...p.seeds],
    steps: p.steps,
    model: p.model,
    sets: level === null ? { ...p.sets } : { ...p.sets, 'training.pressure': level },
    baseline: p.baseline,
    episodes: p.episodes,
    threshold: 0.5,
    stopOnCollapse: p.stopOnCollapse ? { fraction: p.fraction } : null,
    ...(p.arms ? { arms: p.arms.map((a) => ({ ...a, sets: { ...a.sets } })) } : {}),
  };
}

/**
 * Train (or continue) every level's study; true when every run completed. Outcomes per run with the level: with a
 * report dir, from the ledger (which every finished run of the data dir joins), else from the stored runs.
 */
export async function runLadder(o: LadderOptions): Promise<{ complete: boolean; outcomes: LadderRunOutcome[]; states: StudyState[] }> {
  const persist = o.name !== '';
  const keeper = persist && o.reportDir !== undefined ? new LedgerKeeper(o.dataDir, o.reportDir, o.name, o.plan, o.ledger ?? null) : null;
  const states: StudyState[] = [];
  let complete = true;
  // The levels stored but not in this run's plan (a resume with --levels) learn where the ledger is now too.
  if (persist && o.reportDir !== undefined) await moveReportDir(o.dataDir, o.name, o.reportDir, o.plan.levels);
  for (const level of o.plan.levels) {
    const name = persist ? levelStudyName(o.name, level) : '';
    let state: StudyState;
    if (persist && o.resume && studyExists(o.dataDir, name)) {
      state = await readStudy(o.dataDir, name);
    } else {
      const plan = levelPlan(o.plan, level);
      const cells: Array<{ preset: string; arm?: string }> = o.plan.arms
        ? o.plan.arms.map((a) => ({ preset: a.preset, arm: a.name }))
        : plan.presets.map((preset) => ({ preset }));
      state = {
        version: 1,
        name,
        createdAt: new Date().toISOString(),
        plan,
        entries: plan.envs.flatMap((env) =>
          cells.flatMap((c) =>
            plan.seeds.map((seed) => ({ env, ...c, seed, runId: null, status: null, wallSeconds: null, outcome: null })),
          ),
        ),
      };
    }
    const keyOf = (e: StudyEntry) => JSON.stringify([e.env, e.arm ?? e.preset, e.seed]);
    const configs = new Map(state.entries.map((e) => [keyOf(e), o.configOf(state.plan, e)]));
    if (keeper) {
      // The committed ledger's runs are done here too; this data dir's finished runs the ledger lacks join it.
      const fromLedger = keeper.take(level, state);
      if (fromLedger > 0) o.log(`level ${level}: ${fromLedger} of ${state.entries.length} runs from the committed ledger`);
      // Runs this data dir reused whose lines the ledger lacks (an export that dropped them) get them back
      // from their donors; one whose donor line is gone trains again, as a line its study took out is not reused.
      const back = keeper.restoreReused(level, state, o.donors ?? o.reuse?.from ?? []);
      if (back.restored > 0)
        o.log(`level ${level}: ${back.restored} reused runs' lines the ledger lacked were copied again from their donors' ledgers`);
      for (const m of back.missing) {
        o.log(`${m.why}; it trains again`);
        untrain(m.entry);
      }
      await keeper.addFinished(level, state);
      if (o.reuse && o.reuse.from.length > 0) {
        const { from, backendOf } = o.reuse;
        keeper.reuse(level, state, (e) => configs.get(keyOf(e))!, backendOf, from, o.log);
      }
      await keeper.save();
    }
    if (persist && o.reportDir !== undefined) state.reportDir = o.reportDir;
    if (persist) await writeStudy(o.dataDir, state);
    o.log(`pressure ${level}: ${state.entries.filter((e) => e.outcome).length}/${state.entries.length} runs done`);
    // Ledger writes of the runs finished in this level. Each is handled as it is made: a write that fails while
    // other runs of the level still train must not end the process (and them) as an unhandled rejection; the
    // first failure is the ladder's error once the level's runs are done.
    const finished: Array<Promise<void>> = [];
    const joinLedger = (e: StudyEntry): void => {
      if (!keeper || !e.outcome) return;
      const write = keeper.add(level, e).then(() => keeper.save());
      write.catch(() => undefined);
      finished.push(write);
    };
    let ok: boolean;
    try {
      ok = await runStudy({
        dataDir: o.dataDir,
        state,
        persist,
        parallel: o.parallel,
        ...(o.jobs ? { jobs: o.jobs } : {}),
        ...(o.target ? { target: o.target } : {}),
        configOf: (e) => configs.get(keyOf(e))!,
        log: o.log,
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        // Each run joins the ledger as it finishes, so a session that ends mid-level leaves its runs committable.
        ...(keeper ? { onEntry: joinLedger } : {}),
      });
    } finally {
      await Promise.all(finished);
    }
    complete &&= ok;
    states.push(state);
    if (keeper) await keeper.writeReport();
  }
  const outcomes: LadderRunOutcome[] = [];
  if (keeper) outcomes.push(...keeper.outcomes());
  else
    for (const [i, state] of states.entries()) {
      for (const e of state.entries) {
        if (e.outcome && e.runId) outcomes.push((await ladderRun(o.dataDir, e, o.plan.levels[i], o.plan.fraction)).outcome);
      }
    }
  return { complete, outcomes, states };
}

/** A study entry back to not trained (a reused run whose line is gone: its run is not in this data dir). */
function untrain(e: StudyEntry): void {
  Object.assign(e, { runId: null, status: null, wallSeconds: null, outcome: null });
  delete e.stopReason;
  delete e.ledger;
  delete e.reusedFrom;
}

/** Record `reportDir` in the stored level studies of ladder `name` outside `skip` whose record says otherwise. */
async function moveReportDir(dataDir: string, name: string, reportDir: string, skip: readonly number[]): Promise<void> {
  for (const level of await storedLadderLevels(dataDir, name)) {
    if (skip.includes(level)) continue;
    const state = await readStudy(dataDir, levelStudyName(name, level));
    if (state.reportDir === reportDir) continue;
    await writeStudy(dataDir, { ...state, reportDir });
  }
}

/**
 * One finished run's collapse step and final held-out success, from its study outcome and stored metrics (or, for
 * a run taken from the ledger, from the figures it carries); with its ledger record when it is in the run store.
 */
export async function ladderRun(
  dataDir: string,
  e: StudyEntry,
  level: number,
  fraction: number,
): Promise<{ outcome: LadderRunOutcome; record: LedgerRecord | null }> {
  const out = e.outcome!;
  const base = {
    env: e.env,
    preset: e.preset,
    ...(e.arm !== undefined ? { arm: e.arm } : {}),
    level,
    seed: e.seed,
    lastStep: out.steps,
    heldOut: out.heldOutGreedy,
  };
  if (e.ledger) return { outcome: { ...base, ...e.ledger }, record: null };
  const store = await RunStore.open(dataDir);
  let metrics;
  let rec;
  try {
    metrics = await store.readMetrics(e.runId!);
    rec = await store.getRun(e.runId!);
  } finally {
    await store.close();
  }
  if (!rec)
    throw Object.assign(
      new Error(
        `run ${e.runId} (level ${level} · ${e.arm ?? e.preset} · ${e.env} · seed ${e.seed}) has a result in its level's study.json but is ` +
          `not in ${dataDir}'s run store (deleted?), so its collapse step cannot be read; to train it again, set that entry's runId and ` +
          'outcome to null in the study.json and resume',
      ),
      { expected: true },
    );
  const validations = metrics
    .map((m) => [m.step, m.values['val/success_rate']] as [number, number])
    .filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
  const outcome: LadderRunOutcome = {
    ...base,
    collapseStep: collapseStep(out.firstCriticalStep, validations, fraction),
    rolloutSeconds: meanRolloutSeconds(metrics),
    // The engine gap only: a lagged run leaves mismatch/* NaN (null here) and logs its staleness as offpolicy/lag_*.
    rolloutMismatch: meanOverSteps(metrics, 'mismatch/logprob_abs_mean'),
  };
  return { outcome, record: recordOf(e, outcome, rec, fraction) };
}

/** Runs planned per level: envs × cells × seeds. */
export const runsPerLevel = (p: Pick<LadderPlan, 'envs' | 'presets' | 'arms' | 'seeds'>): number =>
  p.envs.length * (p.arms ? p.arms.length : p.presets.length) * p.seeds.length;

/**
 * The ledger of a ladder being trained or exported: its records by run (the ledger's, then this data dir's finished
 * runs over them), written whole and in order after each change, one write at a time; and the summary and README
 * computed from it.
 */
export class LedgerKeeper {
  private readonly records: Map<string, LedgerRecord>;
  private readonly header: LedgerHeader;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataDir: string,
    readonly dir: string,
    private readonly name: string,
    private readonly plan: LadderPlan,
    ledger: Ledger | null,
  ) {
    this.records = new Map((ledger?.records ?? []).map((r) => [ledgerKey(r), r]));
    this.header = ledgerHeader(name, plan, ledger?.header ?? null);
  }

  /**
   * Fill the level's unfinished entries the ledger has finished; how many entries of the level are runs of the
   * ledger's (not of this data dir; a reused entry the ledger lacks is not counted).
   */
  take(level: number, state: StudyState): number {
    for (const e of state.entries) {
      if (e.outcome) continue;
      const r = this.records.get(ledgerKey({ ...e, level }));
      if (r) Object.assign(e, entryOfRecord(r));
    }
    return state.entries.filter((e) => e.ledger && this.records.get(ledgerKey({ ...e, level }))?.runId === e.runId).length;
  }

  /**
   * The level's finished entries whose runs are not in this data dir (`ledger` figures: taken from another study,
   * reusedFrom, or from a ledger — entries stored before they kept reusedFrom name only the run) and whose line the
   * ledger lacks get it again from another study's ledger: the donor's line (donorLine), copied and marked as when it
   * was reused. How many were restored, and the entries whose line none of `donors` holds, each with why in words
   * (an --export-ledger that dropped these lines left a resume summarising without them).
   */
  restoreReused(
    level: number,
    state: StudyState,
    donors: readonly DonorLedger[],
  ): { restored: number; missing: Array<{ entry: StudyEntry; why: string }> } {
    let restored = 0;
    const missing: Array<{ entry: StudyEntry; why: string }> = [];
    for (const e of state.entries) {
      if (!e.outcome || !e.ledger || !e.runId || this.records.has(ledgerKey({ ...e, level }))) continue;
      const found = donorLine(donors, e.reusedFrom ?? { runId: e.runId }, e.seed);
      const place = { level, env: e.env, preset: e.preset, ...(e.arm !== undefined ? { arm: e.arm } : {}), seed: e.seed };
      if (!found.record) {
        missing.push({
          entry: e,
          why: `level ${level}: ${e.arm ?? e.preset} · ${e.env} · seed ${e.seed}: ${e.reusedFrom ? `reused run ${e.runId} from study ${e.reusedFrom.study}` : `run ${e.runId}, not in this data dir (reused or taken from a ledger)`}, but ${found.why}, so its ledger line cannot be written`,
        });
        continue;
      }
      const record = reusedRecord(found.record, found.study, place);
      this.records.set(ledgerKey(record), record);
      restored++;
    }
    return { restored, missing };
  }

  /**
   * The level's entries with no run yet whose run another study's ledger holds (findReusable) become that line,
   * copied and marked reusedFrom, instead of training; each is logged, and so is a line of the same config hash that
   * was refused and why (`backendOf`: what the entry's config would train on here). How many were reused.
   */
  reuse(
    level: number,
    state: StudyState,
    configOf: (e: StudyEntry) => RunConfig,
    backendOf: (config: RunConfig) => LedgerBackend,
    donors: readonly DonorLedger[],
    log: (line: string) => void,
    version: string = appVersion(),
  ): number {
    let n = 0;
    for (const e of state.entries) {
      if (e.outcome || e.runId) continue;
      const want = {
        level,
        env: e.env,
        preset: e.preset,
        ...(e.arm !== undefined ? { arm: e.arm } : {}),
        seed: e.seed,
        configHash: configHash(configOf(e)),
        backend: backendOf(configOf(e)),
      };
      const label = `level ${level}: ${e.arm ?? e.preset} · ${e.env} · seed ${e.seed}`;
      const found = findReusable(donors, want, this.plan, version);
      for (const m of found.misses) log(`${label}: ${m}`);
      if (!found.record) continue;
      const record = reusedRecord(found.record, found.study, want);
      this.records.set(ledgerKey(record), record);
      Object.assign(e, entryOfRecord(record));
      log(`${label}: reused run ${record.runId} (${record.configHash}) from study ${found.study} instead of training it`);
      n++;
    }
    if (n > 0) log(`level ${level}: ${n} of ${state.entries.length} runs reused from other studies' ledgers`);
    return n;
  }

  /** A finished run of this data dir joins the ledger (replacing the ledger's record of that run, if any). */
  async add(level: number, e: StudyEntry): Promise<void> {
    if (!e.outcome || !e.runId || e.ledger) return;
    const { record } = await ladderRun(this.dataDir, e, level, this.plan.fraction);
    if (record) this.records.set(ledgerKey(record), record);
  }

  /** The level's finished runs of this data dir that the ledger lacks (or holds as another run) join it. */
  async addFinished(level: number, state: StudyState): Promise<number> {
    let n = 0;
    for (const e of state.entries) {
      if (!e.outcome || !e.runId || e.ledger) continue;
      if (this.records.get(ledgerKey({ ...e, level }))?.runId === e.runId) continue;
      await this.add(level, e);
      n++;
    }
    return n;
  }

  save(): Promise<void> {
    const records = [...this.records.values()];
    this.writes = this.writes.then(async () => {
      try {
        await mkdir(this.dir, { recursive: true });
        await writeLedger(this.dir, this.header, records);
      } catch (e) {
        throw Object.assign(
          new Error(
            `ladder "${this.name}": could not write its ledger in ${this.dir} (${(e as Error).message}); the finished runs are kept ` +
              `in ${this.dataDir}: make that folder writable, then run the ladder's command again with --resume (or ` +
              `arlarena ladder --study ${this.name} --export-ledger) to write the ledger from them`,
          ),
          { expected: true },
        );
      }
    });
    return this.writes;
  }

  /** The plan's levels' runs in the ledger's order, as the statistics take them. */
  outcomes(): LadderRunOutcome[] {
    return sortRecords(this.header.plan, [...this.records.values()])
      .filter((r) => this.plan.levels.includes(r.level))
      .map(outcomeOfRecord);
  }

  /** Per planned level: the runs the ledger holds of the runs planned. */
  progress(): LadderProgress[] {
    const planned = runsPerLevel(this.plan);
    return this.plan.levels.map((level) => ({
      level,
      done: [...this.records.values()].filter((r) => r.level === level).length,
      planned,
    }));
  }

  /** summary.json and README.md, from the ledger alone. */
  async writeReport(): Promise<void> {
    await this.writes;
    const rows = ladderRows(this.outcomes(), { baseline: this.plan.baseline, vs: armBaselines(this.plan) });
    await writeLadderReport(this.dir, this.name, this.plan, rows, this.progress(), this.reused());
  }

  /** The plan's levels' lines reused from other studies, per study (empty: none). */
  reused(): ReusedFrom[] {
    return reusedSummary(sortRecords(this.header.plan, [...this.records.values()]).filter((r) => this.plan.levels.includes(r.level)));
  }
}

/** How many runs of a level the ledger holds (summary.json's `progress`). */
export interface LadderProgress {
  readonly level: number;
  readonly done: number;
  readonly planned: number;
}

/** Write summary.json and README.md of ladder `name` into `dir` (and remove the temp files killed writes left there). */
export async function writeLadderReport(
  dir: string,
  name: string,
  plan: LadderPlan,
  rows: readonly LadderRow[],
  progress?: readonly LadderProgress[],
  reused: readonly ReusedFrom[] = [],
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await removeDeadTempsIn(dir);
  await writeFileAtomic(join(dir, 'summary.json'), `${JSON.stringify(ladderSummary(name, plan, rows, progress, reused), null, 1)}\n`);
  await writeFileAtomic(join(dir, 'README.md'), ladderReadme(name, plan, rows, progress, reused));
}

/** Mean of one key over the RL steps that logged it finite (step 0 is the validation row); null when none did. */
export function meanOverSteps(
  metrics: ReadonlyArray<{ step: number; values: Readonly<Record<string, number>> }>,
  key: string,
): number | null {
  let sum = 0;
  let n = 0;
  for (const m of metrics) {
    const v = m.values[key];
    if (m.step < 1 || typeof v !== 'number' || !Number.isFinite(v)) continue;
    sum += v;
    n++;
  }
  return n === 0 ? null : sum / n;
}

/** Mean of perf/rollout_s over the RL steps that logged it; null when none did. */
export function meanRolloutSeconds(metrics: ReadonlyArray<{ step: number; values: Readonly<Record<string, number>> }>): number | null {
  return meanOverSteps(metrics, 'perf/rollout_s');
}

/** Each arm's baseline arm (ladderRows' `vs`); undefined for a ladder of bare presets. */
export function armBaselines(plan: Pick<LadderPlan, 'arms'>): Record<string, string | null> | undefined {
  return plan.arms ? Object.fromEntries(plan.arms.map((a) => [a.name, a.vs])) : undefined;
}

export const LADDER_COLLAPSE = (fraction: number): string =>
  `a critical alert of the collapse detector, or a validation whose held-out success fell below ${fraction} × the run's step-0 validation, whichever came first; runs without either are censored at their last step`;

const TIMING =
  "rolloutSecondsPerStep: each run's mean perf/rollout_s (seconds generating and stepping environments per RL step), " +
  "mean and 95 % t interval over the seeds; vsBaseline.rolloutSpeedup = the baseline row's mean ÷ this row's (above 1: faster rollouts). " +
  'Timings are measured on the machine that trained (load from other work slows them), so unlike every other figure they differ between repeats.';

const MISMATCH =
  "rolloutMismatch: each run's mean mismatch/logprob_abs_mean over its RL steps — the mean |log π_rollout − log π_trainer| " +
  "per response token, in nats, between the rollout engine's behaviour log-probs and the trainer's recomputation of the same " +
  'tokens before the update — then mean and 95 % t interval over the seeds. It measures the engine gap a rollout precision ' +
  '(compute.rolloutPrecision) or engine adds. n 0 when no run logged it (π_old computed by the onnxruntime log-prob engine, ' +
  'compute.logProbEngine, or bypass mode, or rollout.policyLag > 0: a lagged run logs the gap as offpolicy/lag_logprob_abs_mean, ' +
  "the policy's own k-update move, and leaves the engine gap unmeasured; runs trained before it did logged that move here).";

export const REUSE_RULE =
  "A reused run's ledger line (marked reusedFrom) is the other study's line copied unchanged: it was the same run — " +
  'the same config hash, seed and major version of the lab, held-out episodes and collapse rule, training backend, ' +
  'rollout engine and gradient workers (K) — so it was not ' +
  'trained again (a ladder run with --no-reuse trains such runs itself). Its rollout s/step and wall seconds were measured when that ' +
  'study trained it, under that load.';

export const ON_COLLAPSE = (stop: boolean): string =>
  stop
    ? 'stop: each run stopped at its collapse step (recorded as stopped, "collapsed at step S (…)"), counted as a collapse at S, and not evaluated held-out (only survivors\' held-out success is reported)'
    : 'continue: every run trained to its last step; a collapsed run counts at its collapse step';

/**
 * The levels of ladder `name` stored in the data dir (studies `<name>-p<level>` of a known level), ascending: what a
 * ladder resumed without --levels continues.
 */
export async function storedLadderLevels(dataDir: string, name: string): Promise<number[]> {
  const dir = studiesDir(dataDir);
  if (!existsSync(dir)) return [];
  const known = new Set(PRESSURE_LEVELS.map((l) => l.level));
  const levels: number[] = [];
  for (const entry of await readdir(dir)) {
    if (!entry.startsWith(`${name}-p`)) continue;
    const rest = entry.slice(name.length + 2);
    if (!/^\d+$/.test(rest)) continue;
    const level = Number(rest);
    if (known.has(level) && studyExists(dataDir, entry)) levels.push(level);
  }
  return levels.sort((a, b) => a - b);
}

/**
 * The plan a stored ladder was started with (its first stored level's): null when no level is stored yet. A
 * ladder stored before stop-on-collapse existed has none (its runs trained on).
 */
export async function storedLadderPlan(dataDir: string, name: string, levels: readonly number[]): Promise<StudyPlan | null> {
  for (const level of levels) {
    const n = levelStudyName(name, level);
    if (studyExists(dataDir, n)) return (await readStudy(dataDir, n)).plan;
  }
  return null;
}

/**
 * Where ladder `name` last wrote its ledger, summary and README (its stored levels' reportDir; the first level that
 * records one): null when no level does (a ladder without --study's report, or stored before levels recorded it).
 */
export async function storedLadderReportDir(dataDir: string, name: string): Promise<string | null> {
  for (const level of await storedLadderLevels(dataDir, name)) {
    const dir = (await readStudy(dataDir, levelStudyName(name, level))).reportDir;
    if (dir !== undefined) return dir;
  }
  return null;
}

export interface LadderSummary {
  readonly kind: 'ladder';
  readonly name: string;
  readonly command: string;
  readonly collapse: string;
  readonly interval: string;
  readonly test: string;
  readonly baseline: string;
  /** What happened to a run at its collapse (ON_COLLAPSE). */
  readonly onCollapse: string;
  readonly levels: ReadonlyArray<{ readonly level: number; readonly overrides: Readonly<Record<string, unknown>>; readonly why: string }>;
  /** The arms (name, preset, overrides, vs) of a ladder of arms; null for bare presets. */
  readonly arms: readonly Arm[] | null;
  /** What rolloutSecondsPerStep and vsBaseline.rolloutSpeedup are. */
  readonly timing: string;
  /** What rolloutMismatch is. */
  readonly mismatch: string;
  /** Per level, the finished runs in the ledger (ledger.jsonl beside summary.json) of the runs planned. */
  readonly progress?: readonly LadderProgress[];
  /** Runs of the ledger copied from other studies' ledgers, not trained by this one (absent: none). */
  readonly reused?: { readonly runs: number; readonly rule: string; readonly from: readonly ReusedFrom[] };
  readonly rows: ReadonlyArray<Record<string, unknown>>;
}

export function ladderSummary(
  name: string,
  plan: LadderPlan,
  rows: readonly LadderRow[],
  progress?: readonly LadderProgress[],
  reused: readonly ReusedFrom[] = [],
): LadderSummary {
  return {
    kind: 'ladder',
    name,
    command: plan.command,
    collapse: LADDER_COLLAPSE(plan.fraction),
    interval: 'exact Clopper–Pearson 95 % interval of the share of seeds that collapsed',
    test: plan.arms
      ? "log-rank (Mantel–Cox) against each arm's baseline arm (arms[].vs) at the same env and level, χ² with 1 df, two-sided α = 0.05"
      : 'log-rank (Mantel–Cox) against the baseline preset at the same env and level, χ² with 1 df, two-sided α = 0.05',
    baseline: plan.baseline,
    onCollapse: ON_COLLAPSE(plan.stopOnCollapse),
    levels: PRESSURE_LEVELS.filter((l) => plan.levels.includes(l.level)).map((l) => ({
      level: l.level,
      overrides: l.overrides,
      why: l.why,
    })),
    arms: plan.arms ? plan.arms.map((a) => ({ ...a, sets: { ...a.sets } })) : null,
    timing: TIMING,
    mismatch: MISMATCH,
    ...(progress ? { progress: progress.map((p) => ({ ...p })) } : {}),
    ...(reused.length > 0
      ? {
          reused: {
            runs: reused.reduce((n, r) => n + r.runs, 0),
            rule: REUSE_RULE,
            from: reused.map((r) => ({ ...r, cells: [...r.cells] })),
          },
        }
      : {}),
    rows: rows.map((r) => ({
      env: r.env,
      preset: r.preset,
      ...(r.arm !== undefined ? { arm: r.arm } : {}),
      level: r.level,
      seeds: r.seeds.length,
      seedList: r.seeds,
      collapsedShare: r.collapsedShare,
      medianCollapseStep: r.medianCollapseStep,
      survival: r.survival,
      vsBaseline: r.vsBaseline
        ? {
            logRankP: r.vsBaseline.logRankP,
            verdict: r.vsBaseline.verdict,
            against: r.vsBaseline.against,
            rolloutSpeedup: r.vsBaseline.rolloutSpeedup,
          }
        : null,
      ...(r.baselineMissing !== undefined ? { baselineMissing: r.baselineMissing } : {}),
      heldOutSurvivors: r.heldOutSurvivors,
      rolloutSecondsPerStep: r.rolloutSecondsPerStep,
      rolloutMismatch: r.rolloutMismatch,
    })),
  };
}

const pc = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(0)} %`);

/** A plain-text table: one line per (env, level, preset) or, in a ladder of arms, per (env, level, arm). */
export function formatLadder(rows: readonly LadderRow[]): string {
  const arms = rows.some((r) => r.arm !== undefined);
  // The engine-gap column only where some run logged it (a ladder whose runs all computed π_old on onnxruntime has none).
  const gap = rows.some((r) => r.rolloutMismatch.n > 0);
  const head = [
    'env',
    'level',
    ...(arms ? ['arm'] : []),
    'preset',
    'seeds',
    'collapsed [95 % CI]',
    'median collapse step',
    'vs baseline (log-rank p)',
    'held-out of survivors',
    'rollout s/step',
    ...(gap ? ['rollout |Δ log p|'] : []),
  ];
  const body = rows.map((r) => [
    r.env,
    String(r.level),
    ...(arms ? [r.arm ?? ''] : []),
    r.preset,
    String(r.seeds.length),
    `${pc(r.collapsedShare.mean)} [${r.collapsedShare.ci95 ? `${pc(r.collapsedShare.ci95[0])}, ${pc(r.collapsedShare.ci95[1])}` : '–'}]`,
    r.medianCollapseStep === null ? 'not reached' : String(r.medianCollapseStep),
    r.vsBaseline
      ? `${arms ? `vs ${r.vsBaseline.against}: ` : ''}${r.vsBaseline.verdict} (p ${r.vsBaseline.logRankP.toPrecision(2)})`
      : r.baselineMissing !== undefined
        ? `no runs of baseline ${r.baselineMissing}`
        : 'baseline',
    r.heldOutSurvivors.mean === null ? '–' : `${pc(r.heldOutSurvivors.mean)} (n ${r.heldOutSurvivors.n})`,
    r.rolloutSecondsPerStep.mean === null
      ? '–'
      : `${r.rolloutSecondsPerStep.mean.toFixed(2)}${r.vsBaseline?.rolloutSpeedup ? ` (×${r.vsBaseline.rolloutSpeedup.toFixed(2)})` : ''}`,
    ...(gap ? [r.rolloutMismatch.mean === null ? '–' : r.rolloutMismatch.mean.toPrecision(2)] : []),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(w[i]))
      .join('  ')
      .trimEnd();
  // "1.00 (×2.00)" beside a time reads either way; say which way it divides once, under the table.
  const speedups = rows.some((r) => r.vsBaseline?.rolloutSpeedup);
  const legend = speedups
    ? ["(×N) beside rollout s/step: the baseline's seconds per step ÷ this row's (above 1: this row's rollouts are faster)"]
    : [];
  return `${[line(head), line(w.map((n) => '-'.repeat(n))), ...body.map(line), ...legend].join('\n')}\n`;
}

export function ladderReadme(
  name: string,
  plan: LadderPlan,
  rows: readonly LadderRow[],
  progress?: readonly LadderProgress[],
  reused: readonly ReusedFrom[] = [],
): string {
  const levels = PRESSURE_LEVELS.filter((l) => plan.levels.includes(l.level));
  return [
    `# Pressure ladder: ${name}`,
    '',
    `Command: \`${plan.command}\``,
    '',
    `Collapse: ${LADDER_COLLAPSE(plan.fraction)}. Interval: exact Clopper–Pearson 95 %. Test: log-rank against ${plan.arms ? "each arm's baseline arm" : plan.baseline} at the same level (χ², 1 df).`,
    '',
    `On collapse: ${ON_COLLAPSE(plan.stopOnCollapse)}.`,
    '',
    ...(plan.arms
      ? [
          '## Arms (preset + overrides, each compared with its baseline arm)',
          '',
          '| arm | preset | overrides | vs |',
          '|---|---|---|---|',
          ...plan.arms.map(
            (a) =>
              `| ${a.name} | ${a.preset} | ${
                Object.entries(a.sets)
                  .map(([k, v]) => `\`${k}=${v}\``)
                  .join(', ') || '–'
              } | ${a.vs ?? 'baseline'} |`,
          ),
          '',
          `As specs (\`--arms\` or an arms file): ${plan.arms.map((a) => `\`${armSpec(a)}\``).join(' ')}`,
          '',
        ]
      : []),
    '## Levels (the same knobs for every preset)',
    '',
    '| level | knobs | why |',
    '|---|---|---|',
    ...levels.map(
      (l) =>
        `| ${l.level} | ${Object.entries(l.overrides)
          .map(([k, v]) => `\`${k}=${v}\``)
          .join(', ')} | ${l.why} |`,
    ),
    '',
    '## Results',
    '',
    '```',
    formatLadder(rows).trimEnd(),
    '```',
    '',
    ...(progress
      ? [
          `Runs finished: ${progress.map((p) => `level ${p.level}: ${p.done} of ${p.planned}`).join(', ')}. Each finished run is a line of ` +
            '`ledger.jsonl` beside this file (its collapse or censoring step, held-out success, config hash); the table is computed ' +
            `from it alone, and \`arlarena ladder --study ${name} --resume\` on a fresh clone takes those runs as done and trains the rest under the plan in the ledger's first line.`,
          '',
        ]
      : []),
    ...(reused.length > 0
      ? [
          `Reused, not trained again: ${reused.reduce((n, r) => n + r.runs, 0)} runs, ${reused
            .map((r) => `${r.runs} from study ${r.study} (${r.cells.join('; ')})`)
            .join(', ')}. ${REUSE_RULE}`,
          '',
        ]
      : []),
    'Survival curves (pairs [step, share not yet collapsed]) are in summary.json.',
    '',
    `Rollout s/step: ${TIMING}`,
    '',
    `Rollout |Δ log p| (where shown): ${MISMATCH}`,
    '',
  ].join('\n');
}
