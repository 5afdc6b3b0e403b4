/**
 * Pressure ladders as the Ladder view shows them (src/shared/ladders.ts), read back from what
 * `arlarena ladder --study NAME` keeps in the data dir: one arena study per level, `NAME-p<level>`, whose plan sets
 * `training.pressure = level` (ladder.ts). The ladder keeps no file of its own, so what it was started with comes
 * from its level studies' plans: the cells (presets, or arms), stop-on-collapse and its fraction; the planned
 * levels — and the fraction of a ladder whose runs trained on — from the command line every plan records, with
 * `arlarena ladder`'s defaults where the command did not name them.
 *
 * The cells come from the same functions as the CLI's summary.json (collapseStep over each run's stored
 * validations and first critical alert, then ladderRows with each arm's baseline), over the runs whose outcome the
 * study has recorded. A ladder still training — or stopped half-way — is summarised over its finished runs, and
 * each cell and level says how many of its planned runs that is; the rows of a finished ladder equal its
 * summary.json.
 *
 * A run taken from a ledger (`--resume` on a fresh clone: the ledger is committed, the runs are not; or a run reused
 * from another study's ledger, trained in that study's data dir) is counted from its line and shown with where it is
 * known from; it links to its run only when this data dir's store has it.
 */
import { isAbsolute, join, relative, sep } from 'node:path';
import { PRESSURE_LEVELS } from '../../../core/config/index';
import { collapseStep, ladderRows, type LadderRow, type LadderRunOutcome } from '../../../core/stats/index';
import type { LadderCell, LadderInfo, LadderLevel, LadderListItem, LadderRunRef } from '../../../shared/ladders';
import type { MetricRecord } from '../../../shared/metrics';
import { LADDER_COLLAPSE, ON_COLLAPSE, REUSE_RULE, armBaselines, meanRolloutSeconds } from './ladder';
import { projectRoot } from '../../platform/appInfo';
import { LEDGER_FILE } from './ledger';
import { reusedSummary } from './reuse';
import type { StudyEntry, StudyPlan, StudyState } from './studyFiles';

/**
 * The ladder's ledger as a path to show: where its latest run wrote it (a level's `reportDir`, relative to the
 * checkout when inside it), else where its command says (`--out DIR`, else resources/studies).
 */
export function ledgerFileOf(command: string, name: string, reportDir?: string): string {
  if (reportDir !== undefined) {
    const file = join(reportDir, LEDGER_FILE);
    const rel = relative(projectRoot(), file);
    return rel.startsWith('..') || isAbsolute(rel) ? file : rel.split(sep).join('/');
  }
  const out = flagValue(command.trim().split(/\s+/), '--out');
  return `${out === null ? 'resources/studies' : out.replace(/\/+$/, '')}/${name}/ledger.jsonl`;
}

/**
 * Where a finished run this data dir lacks is known from, in words: its ledger line (the ladder's own, or the study
 * that trained it and whose line it copied), and where its metrics and checkpoints are instead.
 */
export function notStoredWhere(run: { runId: string; reusedFrom: { study: string; runId: string } | null }, ledger: string): string {
  return run.reusedFrom
    ? `reused from study ${run.reusedFrom.study} (its run ${run.reusedFrom.runId}): not in this data dir — its outcome is ` +
        `${run.reusedFrom.study}'s ledger line, copied into ${ledger}; its metrics and checkpoints are in the data dir that trained ${run.reusedFrom.study}`
    : `not in this data dir: its outcome is its line in ${ledger}; its metrics and checkpoints are in the data dir that trained it`;
}

/** A cell's runs reused from other studies, per study (in the order of their names). */
export function reusedOf(runs: readonly Pick<LadderRunRef, 'reusedFrom'>[]): Array<{ study: string; runs: number }> {
  const by = new Map<string, number>();
  for (const r of runs) if (r.reusedFrom) by.set(r.reusedFrom.study, (by.get(r.reusedFrom.study) ?? 0) + 1);
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([study, n]) => ({ study, runs: n }));
}

/**
 * `arlarena ladder`'s own defaults, for a command that did not name them; the CLI takes its default levels from here
 * (the recalibrated separating range, src/core/config/pressure.ts: level 0 never collapses, level 4 breaks all).
 */
export const LADDER_CLI_DEFAULTS = { levels: [1, 2, 3], fraction: 0.5, episodes: 100 } as const;

/** Where the ladder view reads runs: the run store (its run.json is authoritative, also for another process's runs). */
export interface LadderRunSource {
  getRun(id: string): Promise<{ readonly status: string; readonly step: number } | undefined>;
  readMetrics(id: string): Promise<readonly MetricRecord[]>;
}

const LEVEL_STUDY = /^(.+)-p(\d+)$/;

interface LevelStudy {
  readonly level: number;
  readonly state: StudyState;
}

/** The value of `--flag V` or `--flag=V` in a command line, or null. */
export function flagValue(tokens: readonly string[], flag: string): string | null {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i] === flag) return tokens[i + 1] ?? null;
    if (tokens[i].startsWith(`${flag}=`)) return tokens[i].slice(flag.length + 1);
  }
  return null;
}

/**
 * The levels and the collapse fraction a ladder was started with, read from its command line (the CLI stores it
 * as typed, space-joined); null where the command did not say or the value is not one the CLI accepts.
 */
export function ladderCommandPlan(command: string): { levels: number[] | null; fraction: number | null } {
  const tokens = command.trim().split(/\s+/);
  const rawLevels = flagValue(tokens, '--levels');
  let levels: number[] | null = null;
  if (rawLevels !== null) {
    const parts = rawLevels.split(',').map((s) => s.trim());
    if (parts.every((s) => /^\d+$/.test(s))) levels = [...new Set(parts.map(Number))].sort((a, b) => a - b);
  }
  const rawFraction = flagValue(tokens, '--fraction');
  const f = rawFraction === null ? NaN : Number(rawFraction);
  return { levels, fraction: f > 0 && f < 1 ? f : null };
}

/** The ladders among the studies: level studies grouped by ladder name, each ladder's levels ascending. */
export function findLadders(states: readonly StudyState[]): Map<string, LevelStudy[]> {
  const out = new Map<string, LevelStudy[]>();
  for (const state of states) {
    const m = LEVEL_STUDY.exec(state.name);
    // A study named like a level but not made by the ladder (no training.pressure of that level) is an ordinary study.
    if (!m || state.plan.sets['training.pressure'] !== Number(m[2])) continue;
    const levels = out.get(m[1]) ?? [];
    levels.push({ level: Number(m[2]), state });
    out.set(m[1], levels);
  }
  for (const levels of out.values()) levels.sort((a, b) => a.level - b.level);
  return new Map([...out.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

function plannedLevels(levels: readonly LevelStudy[]): number[] {
  const fromCommand = ladderCommandPlan(levels[0].state.plan.command).levels ?? LADDER_CLI_DEFAULTS.levels;
  return [...new Set([...fromCommand, ...levels.map((l) => l.level)])].sort((a, b) => a - b);
}

/** A level's cells in plan order: its arms, or its presets. */
function cellsOf(plan: StudyPlan): Array<{ preset: string; arm: string | null }> {
  return plan.arms ? plan.arms.map((a) => ({ preset: a.preset, arm: a.name })) : plan.presets.map((preset) => ({ preset, arm: null }));
}

function runsPerLevel(plan: StudyPlan): number {
  return plan.envs.length * cellsOf(plan).length * plan.seeds.length;
}

/** The collapse fraction: stored with a stop-on-collapse plan, else the command's --fraction, else the CLI default. */
function fractionOf(plan: StudyPlan): number {
  return plan.stopOnCollapse?.fraction ?? ladderCommandPlan(plan.command).fraction ?? LADDER_CLI_DEFAULTS.fraction;
}

/** Every ladder in the data dir, by name: its plan and how far it got. */
export function ladderList(states: readonly StudyState[]): LadderListItem[] {
  return [...findLadders(states).entries()].map(([name, levels]) => {
    const first = levels[0].state;
    const planned = plannedLevels(levels);
    const byLevel = new Map(levels.map((l) => [l.level, l.state]));
    const counts = planned.map((level) => {
      const s = byLevel.get(level);
      return s
        ? { done: s.entries.filter((e) => e.outcome).length, planned: s.entries.length }
        : { done: 0, planned: runsPerLevel(first.plan) };
    });
    const done = counts.reduce((a, c) => a + c.done, 0);
    const all = counts.reduce((a, c) => a + c.planned, 0);
    return {
      name,
      source: 'data' as const,
      command: first.plan.command,
      createdAt: first.createdAt,
      levels: planned,
      envs: [...first.plan.envs],
      cells: cellsOf(first.plan).map((c) => c.arm ?? c.preset),
      seeds: first.plan.seeds.length,
      done,
      planned: all,
      complete: done === all,
      problem: null,
    };
  });
}

/** A finished run's collapse step: the ladder's own definition over its stored validations (ladder.ts). */
function collapseOf(e: StudyEntry, metrics: readonly MetricRecord[], fraction: number): number | null {
  const validations = metrics
    .map((m) => [m.step, m.values['val/success_rate']] as [number, number])
    .filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
  return collapseStep(e.outcome!.firstCriticalStep, validations, fraction);
}

/** A finished run of this data dir's study that its run store no longer has (deleted): the study's record is all there is. */
const GONE =
  "not in this data dir's run store (deleted?): its outcome is the study's record of it; its collapse step counts only a critical alert";

const cellKey = (env: string, level: number, name: string) => JSON.stringify([env, level, name]);

const noSummary = { n: 0, mean: null, ci95: null };
const pair = (ci: readonly [number, number] | null): [number, number] | null => (ci ? [ci[0], ci[1]] : null);

function emptyCell(
  env: string,
  level: number,
  c: { preset: string; arm: string | null },
  seeds: readonly number[],
  runs: LadderRunRef[],
): LadderCell {
  return {
    env,
    level,
    preset: c.preset,
    arm: c.arm,
    seeds: [...seeds],
    done: 0,
    complete: false,
    collapsedShare: { collapsed: 0, n: 0, mean: null, ci95: null },
    medianCollapseStep: null,
    survival: [],
    vsBaseline: null,
    heldOutSurvivors: noSummary,
    rolloutSecondsPerStep: noSummary,
    runs,
    reused: reusedOf(runs),
  };
}

function cellOf(row: LadderRow, arm: string | null, seeds: readonly number[], runs: LadderRunRef[]): LadderCell {
  const done = runs.filter((r) => r.done);
  return {
    env: row.env,
    level: row.level,
    preset: row.preset,
    arm,
    seeds: [...seeds],
    done: done.length,
    complete: done.length === seeds.length,
    collapsedShare: {
      collapsed: done.filter((r) => r.collapseStep !== null).length,
      n: row.seeds.length,
      mean: row.collapsedShare.mean,
      ci95: pair(row.collapsedShare.ci95),
    },
    medianCollapseStep: row.medianCollapseStep,
    survival: row.survival.map(([t, s]) => [t, s] as [number, number]),
    vsBaseline: row.vsBaseline
      ? {
          logRankP: row.vsBaseline.logRankP,
          chiSquare: row.vsBaseline.chiSquare,
          verdict: row.vsBaseline.verdict,
          against: row.vsBaseline.against,
          rolloutSpeedup: row.vsBaseline.rolloutSpeedup,
        }
      : null,
    ...(row.baselineMissing !== undefined ? { baselineMissing: row.baselineMissing } : {}),
    heldOutSurvivors: { n: row.heldOutSurvivors.n, mean: row.heldOutSurvivors.mean, ci95: pair(row.heldOutSurvivors.ci95) },
    rolloutSecondsPerStep: {
      n: row.rolloutSecondsPerStep.n,
      mean: row.rolloutSecondsPerStep.mean,
      ci95: pair(row.rolloutSecondsPerStep.ci95),
    },
    runs,
    reused: reusedOf(runs),
  };
}

/** One ladder with its cells (null when the data dir has no ladder of that name). */
export async function ladderInfo(states: readonly StudyState[], name: string, source: LadderRunSource): Promise<LadderInfo | null> {
  const levels = findLadders(states).get(name);
  if (!levels) return null;
  const first = levels[0].state;
  const plan = first.plan;
  const fraction = fractionOf(plan);
  const byLevel = new Map(levels.map((l) => [l.level, l.state]));
  const planned = plannedLevels(levels);
  // Every level learns where the ledger went at each run of the ladder (ladder.ts runLadder); the first that says.
  const reportDir = levels.find((l) => l.state.reportDir !== undefined)?.state.reportDir;
  const ledgerFile = ledgerFileOf(plan.command, name, reportDir);

  const refs: LadderRunRef[] = [];
  const outcomes: LadderRunOutcome[] = [];
  for (const { level, state } of levels) {
    for (const e of state.entries) {
      const rec = e.runId ? await source.getRun(e.runId) : undefined;
      let ref: LadderRunRef = {
        env: e.env,
        level,
        preset: e.preset,
        arm: e.arm ?? null,
        seed: e.seed,
        runId: e.runId,
        status: rec?.status ?? e.status,
        done: false,
        step: rec ? rec.step : null,
        collapseStep: null,
        heldOut: null,
        stopReason: e.stopReason ?? null,
        stored: rec !== undefined,
        reusedFrom: e.reusedFrom ? { ...e.reusedFrom } : null,
        where: null,
      };
      if (e.outcome && e.runId) {
        // A run taken from the committed ledger is not in this data dir: its figures come with its entry.
        const metrics = e.ledger ? [] : await source.readMetrics(e.runId);
        const collapsed = e.ledger ? e.ledger.collapseStep : collapseOf(e, metrics, fraction);
        ref = { ...ref, done: true, step: e.outcome.steps, collapseStep: collapsed, heldOut: e.outcome.heldOutGreedy };
        if (!rec) ref = { ...ref, where: e.ledger ? notStoredWhere({ runId: e.runId, reusedFrom: ref.reusedFrom }, ledgerFile) : GONE };
        outcomes.push({
          env: e.env,
          preset: e.preset,
          ...(e.arm !== undefined ? { arm: e.arm } : {}),
          level,
          seed: e.seed,
          lastStep: e.outcome.steps,
          collapseStep: collapsed,
          heldOut: e.outcome.heldOutGreedy,
          rolloutSeconds: e.ledger ? e.ledger.rolloutSeconds : meanRolloutSeconds(metrics),
        });
      }
      refs.push(ref);
    }
  }
  const vs = armBaselines({ arms: plan.arms ?? null });
  const rows = new Map(
    ladderRows(outcomes, { baseline: plan.baseline, ...(vs ? { vs } : {}) }).map((r) => [cellKey(r.env, r.level, r.arm ?? r.preset), r]),
  );

  const cells: LadderCell[] = [];
  for (const env of plan.envs) {
    for (const level of planned) {
      const levelPlan = (byLevel.get(level) ?? first).plan;
      for (const c of cellsOf(levelPlan)) {
        const runs = refs
          .filter((r) => r.env === env && r.level === level && (r.arm ?? r.preset) === (c.arm ?? c.preset))
          .sort((a, b) => a.seed - b.seed);
        const row = rows.get(cellKey(env, level, c.arm ?? c.preset));
        cells.push(row ? cellOf(row, c.arm, levelPlan.seeds, runs) : emptyCell(env, level, c, levelPlan.seeds, runs));
      }
    }
  }

  const levelInfo: LadderLevel[] = planned.map((level) => {
    const state = byLevel.get(level);
    const known = PRESSURE_LEVELS.find((l) => l.level === level);
    return {
      level,
      study: state?.name ?? `${name}-p${level}`,
      overrides: { ...(known?.overrides ?? {}) },
      why: known?.why ?? 'not a level this version of the lab knows',
      started: state !== undefined,
      done: state ? state.entries.filter((e) => e.outcome).length : 0,
      planned: state ? state.entries.length : runsPerLevel(plan),
    };
  });
  const done = levelInfo.reduce((a, l) => a + l.done, 0);
  const all = levelInfo.reduce((a, l) => a + l.planned, 0);
  const stop = (plan.stopOnCollapse ?? null) !== null;
  return {
    name,
    source: 'data',
    summaryFile: null,
    command: plan.command,
    createdAt: first.createdAt,
    baseline: plan.baseline,
    fraction,
    collapse: LADDER_COLLAPSE(fraction),
    stopOnCollapse: stop,
    onCollapse: ON_COLLAPSE(stop),
    envs: [...plan.envs],
    presets: [...plan.presets],
    arms: plan.arms ? plan.arms.map((a) => ({ name: a.name, preset: a.preset, sets: { ...a.sets }, vs: a.vs })) : null,
    seeds: [...plan.seeds],
    steps: plan.steps,
    episodes: plan.episodes,
    levels: levelInfo,
    done,
    planned: all,
    complete: done === all,
    cells,
    reused: reusedOfRefs(refs, REUSE_RULE),
    ledgerFile,
    ledgerProblem: null,
    notStored: refs.filter((r) => r.done && !r.stored).length,
  };
}

/**
 * A ladder's runs reused from other studies, counted as summary.json's `reused` counts them (reusedSummary), with
 * `rule` as the rule text (null where the summary it stands in for did not carry one); null: none reused.
 */
export function reusedOfRefs(refs: readonly LadderRunRef[], rule: string | null): LadderInfo['reused'] {
  const from = reusedSummary(
    refs.flatMap((r) =>
      r.reusedFrom
        ? [
            {
              level: r.level,
              env: r.env,
              preset: r.preset,
              seed: r.seed,
              reusedFrom: r.reusedFrom,
              ...(r.arm !== null ? { arm: r.arm } : {}),
            },
          ]
        : [],
    ),
  );
  if (from.length === 0) return null;
  return { runs: from.reduce((n, f) => n + f.runs, 0), rule, from: from.map((f) => ({ ...f, cells: [...f.cells] })) };
}
