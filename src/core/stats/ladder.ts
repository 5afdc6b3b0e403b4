/**
 * The pressure ladder's per-cell statistics: for every (env, preset, pressure level) over seeds,
 * the share of seeds that collapsed with its exact 95 % interval, the Kaplan–Meier median collapse step, the
 * survival curve, the log-rank test against the baseline preset at the same level, and the held-out success of
 * the seeds that survived. Pure: the same outcomes give the same rows (a resumed study summarises like a clean one).
 */
import { summarize, type SampleSummary } from './paired';
import { collapsedShare, kaplanMeier, logRank, medianCollapseStep, type SurvivalRun, type SurvivalVerdict } from './survival';

export interface LadderRunOutcome {
  readonly env: string;
  readonly preset: string;
  readonly level: number;
  readonly seed: number;
  /** Last RL step trained (where a run without collapse is censored). */
  readonly lastStep: number;
  /** Step of collapse (survival.ts collapseStep: critical alert or held-out fall), null = none. */
  readonly collapseStep: number | null;
  /** Held-out success of the final policy (fraction), null when not evaluated. */
  readonly heldOut: number | null;
}

export interface LadderRow {
  readonly env: string;
  readonly preset: string;
  readonly level: number;
  readonly seeds: readonly number[];
  readonly collapsedShare: { readonly mean: number | null; readonly ci95: readonly [number, number] | null };
  /** Kaplan–Meier median; null = fewer than half the seeds collapsed within the runs. */
  readonly medianCollapseStep: number | null;
  /** Pairs [step, share of seeds not yet collapsed]. */
  readonly survival: ReadonlyArray<readonly [number, number]>;
  /** Log-rank test against the baseline preset at the same env and level; null for the baseline itself. */
  readonly vsBaseline: { readonly logRankP: number; readonly chiSquare: number; readonly verdict: SurvivalVerdict } | null;
  /** Held-out success of the seeds that did not collapse. */
  readonly heldOutSurvivors: SampleSummary;
}

const key = (o: { env: string; level: number; preset: string }) => JSON.stringify([o.env, o.level, o.preset]);

/** One row per (env, level, preset), in the order env → level → preset of first appearance. */
export function ladderRows(outcomes: readonly LadderRunOutcome[], opts: { baseline: string }): LadderRow[] {
  const groups = new Map<string, LadderRunOutcome[]>();
  for (const o of outcomes) {
    const k = key(o);
    const g = groups.get(k) ?? [];
    if (g.some((x) => x.seed === o.seed))
      throw new Error(`ladderRows: seed ${o.seed} twice for ${o.preset} on ${o.env} at level ${o.level}`);
    g.push(o);
    groups.set(k, g);
  }
  const runsOf = (g: readonly LadderRunOutcome[]): SurvivalRun[] => g.map((o) => ({ collapseStep: o.collapseStep, lastStep: o.lastStep }));
  const rows: LadderRow[] = [];
  const envs = [...new Set(outcomes.map((o) => o.env))];
  for (const env of envs) {
    const levels = [...new Set(outcomes.filter((o) => o.env === env).map((o) => o.level))].sort((a, b) => a - b);
    for (const level of levels) {
      const presets = [...new Set(outcomes.filter((o) => o.env === env && o.level === level).map((o) => o.preset))];
      const base = groups.get(key({ env, level, preset: opts.baseline }));
      for (const preset of presets) {
        const g = [...groups.get(key({ env, level, preset }))!].sort((a, b) => a.seed - b.seed);
        const runs = runsOf(g);
        const share = collapsedShare(runs);
        let vs: LadderRow['vsBaseline'] = null;
        if (preset !== opts.baseline && base) {
          const lr = logRank(runs, runsOf(base));
          vs = { logRankP: lr.p, chiSquare: lr.chiSquare, verdict: lr.verdict };
        }
        rows.push({
          env,
          preset,
          level,
          seeds: g.map((o) => o.seed),
          collapsedShare: { mean: share.mean, ci95: share.ci95 },
          medianCollapseStep: medianCollapseStep(runs),
          survival: kaplanMeier(runs),
          vsBaseline: vs,
          heldOutSurvivors: summarize(
            g.filter((o) => o.collapseStep === null).map((o) => o.heldOut),
            [0, 1],
          ),
        });
      }
    }
  }
  return rows;
}
