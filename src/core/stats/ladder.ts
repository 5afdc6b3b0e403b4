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
  /** The arm (a named preset + overrides) the run belongs to; absent: the preset is the cell. */
  readonly arm?: string;
  /** The run's mean rollout seconds per RL step (perf/rollout_s); null or absent when not logged. */
  readonly rolloutSeconds?: number | null;
  /**
   * The run's mean rollout–trainer log-prob gap per token (mismatch/logprob_abs_mean over its RL steps, nats): how
   * far the behaviour policy the rollout engine sampled with was from the trainer's; null or absent when not logged
   * (a run with rollout.policyLag > 0 logs its staleness as offpolicy/lag_* instead).
   */
  readonly rolloutMismatch?: number | null;
}

export interface LadderRow {
  readonly env: string;
  readonly preset: string;
  /** The arm of this row (a study of arms); absent in a study of bare presets. */
  readonly arm?: string;
  readonly level: number;
  readonly seeds: readonly number[];
  readonly collapsedShare: { readonly mean: number | null; readonly ci95: readonly [number, number] | null };
  /** Kaplan–Meier median; null = fewer than half the seeds collapsed within the runs. */
  readonly medianCollapseStep: number | null;
  /** Pairs [step, share of seeds not yet collapsed]. */
  readonly survival: ReadonlyArray<readonly [number, number]>;
  /**
   * Log-rank test against the baseline at the same env and level (`against`: the baseline preset, or the arm's
   * `vs` arm), with the rollout speed-up over it (its mean rollout seconds per step ÷ this row's); null for a
   * baseline itself.
   */
  readonly vsBaseline: {
    readonly logRankP: number;
    readonly chiSquare: number;
    readonly verdict: SurvivalVerdict;
    readonly against: string;
    readonly rolloutSpeedup: number | null;
  } | null;
  /**
   * The baseline this row is compared with when it has no runs at the row's env and level (vsBaseline is then null
   * though the row is no baseline); absent otherwise. A ladder missing its baseline's cell must say so, not print its
   * other rows as baselines.
   */
  readonly baselineMissing?: string;
  /** Held-out success of the seeds that did not collapse. */
  readonly heldOutSurvivors: SampleSummary;
  /** Mean rollout seconds per RL step over the seeds (timing: measured, not a function of the seeds). */
  readonly rolloutSecondsPerStep: SampleSummary;
  /** Mean rollout–trainer log-prob gap per token (nats) over the seeds; n 0 when no run logged it. */
  readonly rolloutMismatch: SampleSummary;
}

/** A row's group: its arm in a study of arms, else its preset. */
const groupOf = (o: LadderRunOutcome): string => o.arm ?? o.preset;
const key = (env: string, level: number, group: string) => JSON.stringify([env, level, group]);

/**
 * One row per (env, level, preset) — or per (env, level, arm) for outcomes with arms — in the order env → level →
 * group of first appearance. A preset row is compared with `baseline`; an arm row with `vs[arm]` (null or absent:
 * a baseline arm).
 */
export function ladderRows(
  outcomes: readonly LadderRunOutcome[],
  opts: { baseline: string; vs?: Readonly<Record<string, string | null>> },
): LadderRow[] {
  const groups = new Map<string, LadderRunOutcome[]>();
  for (const o of outcomes) {
    const k = key(o.env, o.level, groupOf(o));
    const g = groups.get(k) ?? [];
    if (g.some((x) => x.seed === o.seed))
      throw new Error(`ladderRows: seed ${o.seed} twice for ${groupOf(o)} on ${o.env} at level ${o.level}`);
    if (g.length > 0 && g[0].preset !== o.preset)
      throw new Error(
        `ladderRows: arm ${groupOf(o)} has runs of two presets (${g[0].preset}, ${o.preset}) on ${o.env} at level ${o.level}`,
      );
    g.push(o);
    groups.set(k, g);
  }
  const runsOf = (g: readonly LadderRunOutcome[]): SurvivalRun[] => g.map((o) => ({ collapseStep: o.collapseStep, lastStep: o.lastStep }));
  const rollout = (g: readonly LadderRunOutcome[]) => summarize(g.map((o) => o.rolloutSeconds ?? null));
  const rows: LadderRow[] = [];
  const envs = [...new Set(outcomes.map((o) => o.env))];
  for (const env of envs) {
    const levels = [...new Set(outcomes.filter((o) => o.env === env).map((o) => o.level))].sort((a, b) => a - b);
    for (const level of levels) {
      const here = outcomes.filter((o) => o.env === env && o.level === level);
      const names = [...new Set(here.map(groupOf))];
      for (const name of names) {
        const g = [...groups.get(key(env, level, name))!].sort((a, b) => a.seed - b.seed);
        const arm = g[0].arm;
        const against = arm !== undefined ? (opts.vs?.[arm] ?? null) : name !== opts.baseline ? opts.baseline : null;
        const base = against === null ? undefined : groups.get(key(env, level, against));
        const runs = runsOf(g);
        const share = collapsedShare(runs);
        const time = rollout(g);
        let vs: LadderRow['vsBaseline'] = null;
        if (against !== null && base) {
          const lr = logRank(runs, runsOf(base));
          const baseTime = rollout(base).mean;
          vs = {
            logRankP: lr.p,
            chiSquare: lr.chiSquare,
            verdict: lr.verdict,
            against,
            rolloutSpeedup: baseTime !== null && time.mean !== null && time.mean > 0 ? baseTime / time.mean : null,
          };
        }
        rows.push({
          env,
          preset: g[0].preset,
          ...(arm !== undefined ? { arm } : {}),
          level,
          seeds: g.map((o) => o.seed),
          collapsedShare: { mean: share.mean, ci95: share.ci95 },
          medianCollapseStep: medianCollapseStep(runs),
          survival: kaplanMeier(runs),
          vsBaseline: vs,
          ...(against !== null && !base ? { baselineMissing: against } : {}),
          heldOutSurvivors: summarize(
            g.filter((o) => o.collapseStep === null).map((o) => o.heldOut),
            [0, 1],
          ),
          rolloutSecondsPerStep: time,
          rolloutMismatch: summarize(g.map((o) => o.rolloutMismatch ?? null)),
        });
      }
    }
  }
  return rows;
}
