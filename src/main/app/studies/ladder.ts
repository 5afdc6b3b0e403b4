/**
 * The pressure ladder study: presets × pressure levels × seeds, each level an ordinary study
 * (`<name>-p<level>`, runs trained and evaluated by runStudy, resumable the same way) whose plan adds
 * `training.pressure = level` to every run. Then, per run, when it collapsed — its first critical alert or the
 * first validation whose held-out success fell below `fraction` × its step-0 validation — and the ladder rows
 * (src/core/stats/ladder.ts): share collapsed, median collapse step, survival, log-rank against the baseline.
 */
import { PRESSURE_LEVELS, type RunConfig } from '../../../core/config/index';
import { collapseStep, type LadderRow, type LadderRunOutcome } from '../../../core/stats/index';
import { RunStore } from '../../store/index';
import type { ComputeTarget } from '../../remote/computeTarget';
import type { TrainingJobs } from '../../sessions/sessionManager';
import type { Progress } from '../trainRun';
import { runStudy } from './runStudy';
import { readStudy, studyExists, writeStudy, type StudyEntry, type StudyPlan, type StudyState } from './studyFiles';

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
  readonly configOf: (plan: StudyPlan, e: { env: string; preset: string; seed: number }) => RunConfig;
  readonly log: (line: string) => void;
  readonly onProgress?: (runId: string, p: Progress) => void;
}

export function levelStudyName(name: string, level: number): string {
  return `${name}-p${level}`;
}

/** Train (or continue) every level's study; true when every run completed. Outcomes per run with the level. */
export async function runLadder(o: LadderOptions): Promise<{ complete: boolean; outcomes: LadderRunOutcome[]; states: StudyState[] }> {
  const persist = o.name !== '';
  const states: StudyState[] = [];
  let complete = true;
  for (const level of o.plan.levels) {
    const name = persist ? levelStudyName(o.name, level) : '';
    let state: StudyState;
    if (persist && o.resume && studyExists(o.dataDir, name)) {
      state = await readStudy(o.dataDir, name);
    } else {
      const plan: StudyPlan = {
        command: o.plan.command,
        envs: [...o.plan.envs],
        presets: [...o.plan.presets],
        seeds: [...o.plan.seeds],
        steps: o.plan.steps,
        model: o.plan.model,
        sets: { ...o.plan.sets, 'training.pressure': level },
        baseline: o.plan.baseline,
        episodes: o.plan.episodes,
        threshold: 0.5,
      };
      state = {
        version: 1,
        name,
        createdAt: new Date().toISOString(),
        plan,
        entries: plan.envs.flatMap((env) =>
          plan.presets.flatMap((preset) =>
            plan.seeds.map((seed) => ({ env, preset, seed, runId: null, status: null, wallSeconds: null, outcome: null })),
          ),
        ),
      };
      if (persist) await writeStudy(o.dataDir, state);
    }
    o.log(`pressure ${level}: ${state.entries.filter((e) => e.outcome).length}/${state.entries.length} runs done`);
    const configs = new Map(state.entries.map((e) => [JSON.stringify([e.env, e.preset, e.seed]), o.configOf(state.plan, e)]));
    const ok = await runStudy({
      dataDir: o.dataDir,
      state,
      persist,
      parallel: o.parallel,
      ...(o.jobs ? { jobs: o.jobs } : {}),
      ...(o.target ? { target: o.target } : {}),
      configOf: (e) => configs.get(JSON.stringify([e.env, e.preset, e.seed]))!,
      log: o.log,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
    });
    complete &&= ok;
    states.push(state);
  }
  const outcomes: LadderRunOutcome[] = [];
  for (const [i, state] of states.entries()) {
    for (const e of state.entries) {
      if (e.outcome && e.runId) outcomes.push(await ladderOutcome(o.dataDir, e, o.plan.levels[i], o.plan.fraction));
    }
  }
  return { complete, outcomes, states };
}

/** One finished run's collapse step and final held-out success, from its study outcome and stored metrics. */
async function ladderOutcome(dataDir: string, e: StudyEntry, level: number, fraction: number): Promise<LadderRunOutcome> {
  const store = await RunStore.open(dataDir);
  let metrics;
  try {
    metrics = await store.readMetrics(e.runId!);
  } finally {
    await store.close();
  }
  const validations = metrics
    .map((m) => [m.step, m.values['val/success_rate']] as [number, number])
    .filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
  const out = e.outcome!;
  return {
    env: e.env,
    preset: e.preset,
    level,
    seed: e.seed,
    lastStep: out.steps,
    collapseStep: collapseStep(out.firstCriticalStep, validations, fraction),
    heldOut: out.heldOutGreedy,
  };
}

export const LADDER_COLLAPSE = (fraction: number): string =>
  `a critical alert of the collapse detector, or a validation whose held-out success fell below ${fraction} × the run's step-0 validation, whichever came first; runs without either are censored at their last step`;

export interface LadderSummary {
  readonly kind: 'ladder';
  readonly name: string;
  readonly command: string;
  readonly collapse: string;
  readonly interval: string;
  readonly test: string;
  readonly baseline: string;
  readonly levels: ReadonlyArray<{ readonly level: number; readonly overrides: Readonly<Record<string, unknown>>; readonly why: string }>;
  readonly rows: ReadonlyArray<Record<string, unknown>>;
}

export function ladderSummary(name: string, plan: LadderPlan, rows: readonly LadderRow[]): LadderSummary {
  return {
    kind: 'ladder',
    name,
    command: plan.command,
    collapse: LADDER_COLLAPSE(plan.fraction),
    interval: 'exact Clopper–Pearson 95 % interval of the share of seeds that collapsed',
    test: 'log-rank (Mantel–Cox) against the baseline preset at the same env and level, χ² with 1 df, two-sided α = 0.05',
    baseline: plan.baseline,
    levels: PRESSURE_LEVELS.filter((l) => plan.levels.includes(l.level)).map((l) => ({
      level: l.level,
      overrides: l.overrides,
      why: l.why,
    })),
    rows: rows.map((r) => ({
      env: r.env,
      preset: r.preset,
      level: r.level,
      seeds: r.seeds.length,
      seedList: r.seeds,
      collapsedShare: r.collapsedShare,
      medianCollapseStep: r.medianCollapseStep,
      survival: r.survival,
      vsBaseline: r.vsBaseline ? { logRankP: r.vsBaseline.logRankP, verdict: r.vsBaseline.verdict } : null,
      heldOutSurvivors: r.heldOutSurvivors,
    })),
  };
}

const pc = (x: number | null) => (x === null ? '–' : `${(100 * x).toFixed(0)} %`);

/** A plain-text table: one line per (env, level, preset). */
export function formatLadder(rows: readonly LadderRow[]): string {
  const head = [
    'env',
    'level',
    'preset',
    'seeds',
    'collapsed [95 % CI]',
    'median collapse step',
    'vs baseline (log-rank p)',
    'held-out of survivors',
  ];
  const body = rows.map((r) => [
    r.env,
    String(r.level),
    r.preset,
    String(r.seeds.length),
    `${pc(r.collapsedShare.mean)} [${r.collapsedShare.ci95 ? `${pc(r.collapsedShare.ci95[0])}, ${pc(r.collapsedShare.ci95[1])}` : '–'}]`,
    r.medianCollapseStep === null ? 'not reached' : String(r.medianCollapseStep),
    r.vsBaseline ? `${r.vsBaseline.verdict} (p ${r.vsBaseline.logRankP.toPrecision(2)})` : 'baseline',
    r.heldOutSurvivors.mean === null ? '–' : `${pc(r.heldOutSurvivors.mean)} (n ${r.heldOutSurvivors.n})`,
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(w[i]))
      .join('  ')
      .trimEnd();
  return `${[line(head), line(w.map((n) => '-'.repeat(n))), ...body.map(line)].join('\n')}\n`;
}

export function ladderReadme(name: string, plan: LadderPlan, rows: readonly LadderRow[]): string {
  const levels = PRESSURE_LEVELS.filter((l) => plan.levels.includes(l.level));
  return [
    `# Pressure ladder: ${name}`,
    '',
    `Command: \`${plan.command}\``,
    '',
    `Collapse: ${LADDER_COLLAPSE(plan.fraction)}. Interval: exact Clopper–Pearson 95 %. Test: log-rank against ${plan.baseline} at the same level (χ², 1 df).`,
    '',
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
    'Survival curves (pairs [step, share not yet collapsed]) are in summary.json.',
    '',
  ].join('\n');
}
