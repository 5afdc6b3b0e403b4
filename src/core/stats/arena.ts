/**
 * The arena's per-(env, preset) statistics over seeds, from per-run outcomes the CLI
 * collects (held-out evaluations, the training metric stream, the detector's alerts). Pure: the same
 * inputs give the same table, so an interrupted-and-resumed study summarises exactly like an
 * uninterrupted one.
 */
import type { MetricRecord } from '../../shared/metrics';
import { pairedComparison, summarize, type PairedComparison, type SampleSummary } from './paired';

/** What one finished run of a study contributes. Success values are fractions in [0, 1]. */
export interface ArenaRunOutcome {
  readonly env: string;
  readonly preset: string;
  readonly seed: number;
  /** RL steps the run trained. */
  readonly steps: number;
  /** Held-out success of the final policy, greedy decoding (T = 0). */
  readonly heldOutGreedy: number | null;
  /** Held-out success of the final policy, sampled at the validation temperature. */
  readonly heldOutSampled: number | null;
  /** Training success (episode/success_rate) at the last step, and its best step. */
  readonly finalTrainSuccess: number | null;
  readonly bestTrainSuccess: number | null;
  /** First step of a critical collapse alert, null when the detector raised none. */
  readonly firstCriticalStep: number | null;
  /** First RL step whose training success reached the threshold, null when none did. */
  readonly stepsToThreshold: number | null;
}

export interface ArenaCell {
  readonly env: string;
  readonly preset: string;
  readonly seeds: readonly number[];
  /** Steps per run (the largest, if runs differ). */
  readonly steps: number;
  readonly heldOutGreedy: SampleSummary;
  readonly heldOutSampled: SampleSummary;
  readonly finalTrainSuccess: SampleSummary;
  readonly bestTrainSuccess: SampleSummary;
  /** Share of seeds whose run raised a critical alert. */
  readonly criticalAlertShare: number;
  /** Earliest first-critical-alert step over the seeds; null when no seed had one. */
  readonly firstCriticalStep: number | null;
  /** Steps to the training-success threshold over the seeds that reached it. */
  readonly stepsToThreshold: { readonly threshold: number; readonly reached: number; readonly of: number; readonly mean: number | null };
  /** Paired comparison with the baseline preset on held-out greedy / sampled success; null for the baseline itself. */
  readonly vsBaseline: PairedComparison | null;
  readonly vsBaselineSampled: PairedComparison | null;
}

const UNIT: readonly [number, number] = [0, 1];

/**
 * Per-run figures from its metric stream: final and best training success, and the first step whose
 * training success reached `threshold`. Non-finite values (steps without the metric) are skipped.
 */
export function trainingOutcome(
  records: readonly MetricRecord[],
  threshold: number,
): Pick<ArenaRunOutcome, 'finalTrainSuccess' | 'bestTrainSuccess' | 'stepsToThreshold'> {
  let final: number | null = null;
  let best: number | null = null;
  let reached: number | null = null;
  for (const r of [...records].sort((a, b) => a.step - b.step)) {
    const v = r.values['episode/success_rate'];
    if (typeof v !== 'number' || !Number.isFinite(v) || r.step < 1) continue;
    final = v;
    best = best === null ? v : Math.max(best, v);
    if (reached === null && v >= threshold) reached = r.step;
  }
  return { finalTrainSuccess: final, bestTrainSuccess: best, stepsToThreshold: reached };
}

/** The first step of the earliest critical alert, or null. */
export function firstCriticalStep(alerts: readonly { severity: string; firstStep: number }[]): number | null {
  const steps = alerts.filter((a) => a.severity === 'critical').map((a) => a.firstStep);
  return steps.length === 0 ? null : Math.min(...steps);
}

function bySeed(runs: readonly ArenaRunOutcome[], pick: (r: ArenaRunOutcome) => number | null): Map<number, number | null> {
  return new Map(runs.map((r) => [r.seed, pick(r)]));
}

/**
 * One cell per (env, preset) in first-seen order, each compared with `baseline` in the same env, seed by
 * seed. Throws when a (env, preset, seed) appears twice: a pairing would be ambiguous.
 */
export function arenaCells(runs: readonly ArenaRunOutcome[], opts: { baseline: string; threshold: number }): ArenaCell[] {
  const groups = new Map<string, ArenaRunOutcome[]>();
  for (const r of runs) {
    const key = JSON.stringify([r.env, r.preset]);
    const g = groups.get(key) ?? [];
    if (g.some((x) => x.seed === r.seed))
      throw new Error(`arenaCells: ${r.preset} on ${r.env} has seed ${r.seed} twice; each (env, preset, seed) must be one run`);
    g.push(r);
    groups.set(key, g);
  }
  const cells: ArenaCell[] = [];
  for (const g of groups.values()) {
    const { env, preset } = g[0];
    const sorted = [...g].sort((a, b) => a.seed - b.seed);
    const base = preset === opts.baseline ? undefined : groups.get(JSON.stringify([env, opts.baseline]));
    const alertSteps = sorted.map((r) => r.firstCriticalStep).filter((s): s is number => s !== null);
    const reached = sorted.map((r) => r.stepsToThreshold).filter((s): s is number => s !== null);
    cells.push({
      env,
      preset,
      seeds: sorted.map((r) => r.seed),
      steps: Math.max(...sorted.map((r) => r.steps)),
      heldOutGreedy: summarize(
        sorted.map((r) => r.heldOutGreedy),
        UNIT,
      ),
      heldOutSampled: summarize(
        sorted.map((r) => r.heldOutSampled),
        UNIT,
      ),
      finalTrainSuccess: summarize(
        sorted.map((r) => r.finalTrainSuccess),
        UNIT,
      ),
      bestTrainSuccess: summarize(
        sorted.map((r) => r.bestTrainSuccess),
        UNIT,
      ),
      criticalAlertShare: alertSteps.length / sorted.length,
      firstCriticalStep: alertSteps.length === 0 ? null : Math.min(...alertSteps),
      stepsToThreshold: {
        threshold: opts.threshold,
        reached: reached.length,
        of: sorted.length,
        mean: reached.length === 0 ? null : reached.reduce((a, b) => a + b, 0) / reached.length,
      },
      vsBaseline: base
        ? pairedComparison(
            bySeed(sorted, (r) => r.heldOutGreedy),
            bySeed(base, (r) => r.heldOutGreedy),
          )
        : null,
      vsBaselineSampled: base
        ? pairedComparison(
            bySeed(sorted, (r) => r.heldOutSampled),
            bySeed(base, (r) => r.heldOutSampled),
          )
        : null,
    });
  }
  return cells;
}
