/**
 * What a study (or a one-off arena) reports: the summary object written to
 * `resources/studies/<name>/summary.json`, its README, and the terminal table printed like the paper's
 * main table (spec §5.1) with 95 % intervals and verdicts. Only deterministic figures go into the summary
 * (no run ids, times or wall seconds), so a resumed study writes the same file as an uninterrupted one.
 */
import type { ArenaCell, PairedComparison, SampleSummary } from '../../../core/stats/index';
import type { StudyPlan, StudyState } from './studyFiles';

export const TEST_DESCRIPTION =
  'paired t test (two-sided, alpha 0.05) on the per-seed differences of held-out greedy success, seeds matched so paired runs ' +
  'trained on the same task seeds and were evaluated on the same held-out tasks; the exact sign-flip permutation p is given beside it. ' +
  'Why t: with N seeds the sign-flip test cannot give p below 2/2^N (0.0625 at 5 seeds). ' +
  'Seeds for 80 % power: n = ceil(((z_0.975 + z_0.80) / d)^2 + z_0.975^2 / 2) with d = |mean diff| / sd of the diffs ' +
  "(normal approximation with Guenther's correction for the t test), for the observed effect.";

interface Interval {
  mean: number | null;
  ci95: readonly [number, number] | null;
  sd: number | null;
  n: number;
}

function interval(s: SampleSummary): Interval {
  return { mean: s.mean, ci95: s.ci95, sd: s.sd, n: s.n };
}

function versus(c: PairedComparison | null) {
  if (!c) return null;
  return {
    diff: c.diff,
    ci95: c.ci95,
    p: c.p,
    verdict: c.verdict,
    pSignFlip: c.pSignFlip,
    seedsFor80Power: c.seedsFor80Power,
    n: c.n,
    seeds: c.seeds,
    test: c.test,
  };
}

export interface StudySummary {
  readonly command: string;
  readonly study: string | null;
  readonly plan: Omit<StudyPlan, 'command'>;
  readonly test: string;
  readonly rows: readonly unknown[];
  /** Planned runs without a result (not completed): the table leaves them out. */
  readonly incomplete: readonly { env: string; preset: string; seed: number; status: string | null }[];
}

export function studySummary(state: StudyState, cells: readonly ArenaCell[]): StudySummary {
  const { command, ...plan } = state.plan;
  return {
    command,
    study: state.name || null,
    plan,
    test: TEST_DESCRIPTION,
    rows: cells.map((c) => ({
      env: c.env,
      preset: c.preset,
      seeds: c.seeds,
      steps: c.steps,
      heldOutGreedy: interval(c.heldOutGreedy),
      heldOutSampled: interval(c.heldOutSampled),
      vsBaseline: versus(c.vsBaseline),
      vsBaselineSampled: versus(c.vsBaselineSampled),
      criticalAlertShare: c.criticalAlertShare,
      firstCriticalStep: c.firstCriticalStep,
      finalTrainSuccess: interval(c.finalTrainSuccess),
      bestTrainSuccess: interval(c.bestTrainSuccess),
      stepsToThreshold: c.stepsToThreshold,
    })),
    incomplete: state.entries.filter((e) => !e.outcome).map((e) => ({ env: e.env, preset: e.preset, seed: e.seed, status: e.status })),
  };
}

const pct = (x: number | null): string => (x === null ? '–' : (100 * x).toFixed(1));
const pts = (x: number | null): string => (x === null ? '–' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`);

function withCi(s: SampleSummary): string {
  if (s.mean === null) return 'n/a';
  return s.ci95 ? `${pct(s.mean)} [${pct(s.ci95[0])}, ${pct(s.ci95[1])}]` : pct(s.mean);
}

function diffCi(c: PairedComparison | null): string {
  if (!c) return '(baseline)';
  if (c.diff === null) return 'n/a';
  return c.ci95 ? `${pts(c.diff)} [${pts(c.ci95[0])}, ${pts(c.ci95[1])}]` : pts(c.diff);
}

function pValue(p: number | null): string {
  if (p === null) return '–';
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

/** Rows of one env's table, as [header, ...rows] of cells (strings). */
export function tableRows(cells: readonly ArenaCell[], baseline: string): string[][] {
  const head = [
    'method',
    'held-out greedy %',
    'sampled %',
    'train final %',
    `Δ greedy vs ${baseline} (pts)`,
    'p',
    'verdict',
    'seeds for 80 %',
    'critical',
    'steps to thr.',
  ];
  const rows = cells.map((c) => [
    c.preset,
    withCi(c.heldOutGreedy),
    withCi(c.heldOutSampled),
    withCi(c.finalTrainSuccess),
    diffCi(c.vsBaseline),
    pValue(c.vsBaseline?.p ?? null),
    c.vsBaseline?.verdict ?? '',
    c.vsBaseline?.seedsFor80Power === null || c.vsBaseline === null ? '–' : String(c.vsBaseline.seedsFor80Power),
    `${Math.round(c.criticalAlertShare * c.seeds.length)}/${c.seeds.length}${c.firstCriticalStep === null ? '' : ` @${c.firstCriticalStep}`}`,
    c.stepsToThreshold.mean === null
      ? `0/${c.stepsToThreshold.of}`
      : `${c.stepsToThreshold.mean.toFixed(1)} (${c.stepsToThreshold.reached}/${c.stepsToThreshold.of})`,
  ]);
  return [head, ...rows];
}

/** Padded lines: the header, a rule under each column, then the rows. */
function pad(rows: string[][], sep: string): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...r[i]].length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => v + ' '.repeat(widths[i] - [...v].length))
      .join(sep)
      .trimEnd();
  return [line(rows[0]), widths.map((w) => '─'.repeat(w)).join(sep), ...rows.slice(1).map(line)];
}

function legend(state: StudyState): string {
  const p = state.plan;
  return (
    `held-out success on ${p.episodes} fixed held-out tasks (greedy T = 0; sampled at the validation temperature) of each run's final policy, ` +
    `mean [95 % t interval] over seeds; Δ = paired difference vs ${p.baseline} with its 95 % interval; p from a ${TEST_DESCRIPTION.split(';')[0]}; ` +
    `critical = seeds with a critical collapse alert (@ earliest first step); steps to thr. = mean RL steps until training success ≥ ${p.threshold} (seeds that reached it)`
  );
}

/** The terminal table: one block per env. */
export function formatTable(state: StudyState, cells: readonly ArenaCell[]): string {
  const out: string[] = [];
  for (const env of state.plan.envs) {
    const mine = cells.filter((c) => c.env === env);
    if (mine.length === 0) continue;
    const seeds = Math.max(...mine.map((c) => c.seeds.length));
    const steps = Math.max(...mine.map((c) => c.steps));
    out.push(`${env} · ${seeds} seed(s) × ${steps} steps · baseline ${state.plan.baseline}`);
    const lines = pad(tableRows(mine, state.plan.baseline), '  ');
    out.push(...lines, '');
  }
  out.push(legend(state));
  return `${out.join('\n')}\n`;
}

/** The README written beside summary.json. */
export function studyReadme(state: StudyState, cells: readonly ArenaCell[]): string {
  const p = state.plan;
  const md: string[] = [
    `# Study ${state.name}`,
    '',
    'Made by `arlarena arena --study`; `summary.json` beside this file holds every number below (and more: sd, n, the sign-flip p, final and best training success, steps to the threshold).',
    '',
    '```',
    p.command,
    '```',
    '',
    `Plan: envs ${p.envs.join(', ')} × presets ${p.presets.join(', ')} × seeds ${p.seeds.join(', ')} × ${p.steps ?? "each preset's"} RL steps` +
      `${p.model ? `, model ${p.model}` : ''}${
        Object.keys(p.sets).length
          ? `, settings ${Object.entries(p.sets)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`
          : ''
      }. ` +
      `The runs live in the data dir's run store (tag \`study:${state.name}\`); \`arlarena arena --study ${state.name} --resume\` continues any unfinished one from its latest checkpoint.`,
    '',
    `Statistics: ${TEST_DESCRIPTION}`,
    '',
  ];
  for (const env of p.envs) {
    const mine = cells.filter((c) => c.env === env);
    if (mine.length === 0) continue;
    const rows = tableRows(mine, p.baseline);
    md.push(
      `## ${env}`,
      '',
      `| ${rows[0].join(' | ')} |`,
      `|${rows[0].map(() => '---').join('|')}|`,
      ...rows.slice(1).map((r) => `| ${r.join(' | ')} |`),
      '',
    );
  }
  const missing = state.entries.filter((e) => !e.outcome);
  if (missing.length > 0)
    md.push(
      `Not in the table (run not completed): ${missing.map((e) => `${e.preset}/${e.env}/seed ${e.seed} (${e.status ?? 'not started'})`).join(', ')}.`,
      '',
    );
  md.push(legend(state), '');
  return md.join('\n');
}
