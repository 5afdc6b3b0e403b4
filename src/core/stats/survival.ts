/**
 * Survival statistics of collapse over seeds (the pressure ladder): pure functions of per-run
 * outcomes `{collapseStep, lastStep}` — a run collapsed at `collapseStep`, or survived to `lastStep` and is
 * censored there (it might still collapse later; we do not know).
 *
 * - share collapsed with an exact Clopper–Pearson 95 % interval (Beta quantiles): at the 8–16 seeds a laptop
 *   affords, an exact interval never under-covers, where Wald fails and Wilson can dip below 95 %;
 * - Kaplan–Meier survival S(t) = Π_{t_i ≤ t} (1 − d_i / n_i) over the distinct collapse steps t_i (d_i collapses,
 *   n_i runs still at risk); a run censored at step c is at risk at every step ≤ c (censoring after events at
 *   the same step, the usual convention);
 * - median collapse step: the Kaplan–Meier median, the first step where S(t) ≤ 0.5 (null = not reached: fewer
 *   than half the seeds collapsed within the runs) — it accounts for censoring, unlike the median of the
 *   collapsed seeds' steps alone;
 * - the log-rank (Mantel–Cox) test of two groups: at each distinct collapse step, the expected collapses of group
 *   A under "same hazard" E_A = d·n_A/n and the hypergeometric variance V = d·(n_A/n)(1 − n_A/n)(n − d)/(n − 1);
 *   χ² = (O_A − ΣE_A)² / ΣV with 1 degree of freedom, p = P(χ²₁ ≥ χ²) (jstat). No collapse in either group (V = 0)
 *   gives χ² = 0 and p = 1.
 */
import jStat from 'jstat';
import { ALPHA } from './paired';

export interface SurvivalRun {
  /** Step at which the run collapsed (critical alert or held-out fall, see collapseStep), null = never. */
  readonly collapseStep: number | null;
  /** Last step the run trained: where a run that did not collapse is censored. */
  readonly lastStep: number;
}

export interface ShareInterval {
  readonly collapsed: number;
  readonly n: number;
  /** collapsed / n (null without runs). */
  readonly mean: number | null;
  /** Exact Clopper–Pearson 95 % interval (null without runs). */
  readonly ci95: readonly [number, number] | null;
  readonly method: 'clopper-pearson';
}

function checkRuns(runs: readonly SurvivalRun[]): void {
  runs.forEach((r, i) => {
    if (!Number.isFinite(r.lastStep) || r.lastStep < 0) throw new RangeError(`run ${i}: lastStep must be a step ≥ 0, got ${r.lastStep}`);
    if (r.collapseStep !== null && !(Number.isFinite(r.collapseStep) && r.collapseStep >= 0 && r.collapseStep <= r.lastStep)) {
      throw new RangeError(`run ${i}: collapseStep must be null or a step in [0, lastStep = ${r.lastStep}], got ${r.collapseStep}`);
    }
  });
}

/** Exact (Clopper–Pearson) two-sided interval for k successes out of n at level 1 − alpha. */
export function clopperPearson(k: number, n: number, alpha = ALPHA): readonly [number, number] {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`clopperPearson: n must be an integer ≥ 1, got ${n}`);
  if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`clopperPearson: k must be an integer in [0, ${n}], got ${k}`);
  const lo = k === 0 ? 0 : jStat.beta.inv(alpha / 2, k, n - k + 1);
  const hi = k === n ? 1 : jStat.beta.inv(1 - alpha / 2, k + 1, n - k);
  return [lo, hi];
}

export function collapsedShare(runs: readonly SurvivalRun[]): ShareInterval {
  checkRuns(runs);
  const n = runs.length;
  const collapsed = runs.filter((r) => r.collapseStep !== null).length;
  return {
    collapsed,
    n,
    mean: n === 0 ? null : collapsed / n,
    ci95: n === 0 ? null : clopperPearson(collapsed, n),
    method: 'clopper-pearson',
  };
}

/**
 * Kaplan–Meier curve as pairs [step, share not yet collapsed]: [0, 1] first, then one pair per distinct collapse
 * step (the share just after it), then the last observed step (the longest run) if it is later, so the curve
 * spans the runs. Empty input gives [].
 */
export function kaplanMeier(runs: readonly SurvivalRun[]): Array<[number, number]> {
  checkRuns(runs);
  if (runs.length === 0) return [];
  const steps = [...new Set(runs.filter((r) => r.collapseStep !== null).map((r) => r.collapseStep as number))].sort((a, b) => a - b);
  const out: Array<[number, number]> = [[0, 1]];
  let s = 1;
  for (const t of steps) {
    const atRisk = runs.filter((r) => (r.collapseStep ?? r.lastStep) >= t).length;
    const d = runs.filter((r) => r.collapseStep === t).length;
    s *= 1 - d / atRisk;
    if (t === 0) out[0] = [0, s];
    else out.push([t, s]);
  }
  const end = Math.max(...runs.map((r) => r.collapseStep ?? r.lastStep));
  if (end > out[out.length - 1][0]) out.push([end, s]);
  return out;
}

/** The Kaplan–Meier median: first step where S(t) ≤ 0.5; null when the curve never gets there. */
export function medianCollapseStep(runs: readonly SurvivalRun[]): number | null {
  // The curve only drops at collapse steps; the trailing point repeats the last level.
  return kaplanMeier(runs).find(([, s]) => s <= 0.5)?.[0] ?? null;
}

export type SurvivalVerdict = 'collapses less' | 'collapses more' | 'not separable';

export interface LogRank {
  /** Observed and expected (under equal hazards) collapses of group A. */
  readonly observedA: number;
  readonly expectedA: number;
  readonly variance: number;
  /** (O − E)² / V, 1 degree of freedom. */
  readonly chiSquare: number;
  readonly p: number;
  /** A against B at α = 0.05: fewer collapses than expected = "collapses less". */
  readonly verdict: SurvivalVerdict;
}

/** Log-rank (Mantel–Cox) test of group A against group B (e.g. a preset against the baseline at one level). */
export function logRank(a: readonly SurvivalRun[], b: readonly SurvivalRun[]): LogRank {
  checkRuns(a);
  checkRuns(b);
  const all = [...a, ...b];
  const steps = [...new Set(all.filter((r) => r.collapseStep !== null).map((r) => r.collapseStep as number))].sort((x, y) => x - y);
  const atRisk = (g: readonly SurvivalRun[], t: number) => g.filter((r) => (r.collapseStep ?? r.lastStep) >= t).length;
  const died = (g: readonly SurvivalRun[], t: number) => g.filter((r) => r.collapseStep === t).length;
  let observed = 0;
  let expected = 0;
  let variance = 0;
  for (const t of steps) {
    const nA = atRisk(a, t);
    const n = nA + atRisk(b, t);
    const dA = died(a, t);
    const d = dA + died(b, t);
    observed += dA;
    expected += (d * nA) / n;
    if (n > 1) variance += (d * (nA / n) * (1 - nA / n) * (n - d)) / (n - 1);
  }
  const chiSquare = variance > 0 ? (observed - expected) ** 2 / variance : 0;
  const p = variance > 0 ? 1 - jStat.chisquare.cdf(chiSquare, 1) : 1;
  const verdict: SurvivalVerdict = p < ALPHA ? (observed < expected ? 'collapses less' : 'collapses more') : 'not separable';
  return { observedA: observed, expectedA: expected, variance, chiSquare, p, verdict };
}

/**
 * When a run collapsed: the first step of a critical alert, or the first validation whose held-out success fell
 * below `fraction` × the run's starting held-out success (its step-0 / first validation), whichever is earlier;
 * null when neither happened. `validations` are (step, success) pairs; a start of 0 cannot fall.
 */
export function collapseStep(
  firstCritical: number | null,
  validations: readonly (readonly [number, number])[],
  fraction: number,
): number | null {
  if (!(fraction > 0 && fraction < 1)) throw new RangeError(`collapseStep: fraction must be in (0, 1), got ${fraction}`);
  const v = [...validations].filter(([, s]) => Number.isFinite(s)).sort((x, y) => x[0] - y[0]);
  let fell: number | null = null;
  if (v.length > 0 && v[0][1] > 0) {
    const hit = v.slice(1).find(([, s]) => s < fraction * v[0][1]);
    if (hit) fell = hit[0];
  }
  if (firstCritical === null) return fell;
  return fell === null ? firstCritical : Math.min(fell, firstCritical);
}
