/**
 * Per-run summary numbers and the stability verdict shown in the compare view's summary table.
 */
export interface StepSeries {
  /** Training steps. */
  readonly steps: readonly number[];
  readonly y: readonly (number | null)[];
}

export interface Headline {
  readonly final: number | null;
  readonly finalStep: number | null;
  readonly best: number | null;
  readonly bestStep: number | null;
}

/** Last finite and best finite value (`better` says which direction is best). */
export function headline(s: StepSeries, better: 'higher' | 'lower' = 'higher'): Headline {
  let final: number | null = null;
  let finalStep: number | null = null;
  let best: number | null = null;
  let bestStep: number | null = null;
  for (let i = 0; i < s.y.length; i++) {
    const v = s.y[i];
    if (v === null || !Number.isFinite(v)) continue;
    final = v;
    finalStep = s.steps[i];
    if (best === null || (better === 'higher' ? v > best : v < best)) {
      best = v;
      bestStep = s.steps[i];
    }
  }
  return { final, finalStep, best, bestStep };
}

/** The first step at which the series reaches `threshold` (≥ for higher-is-better, ≤ otherwise); null if never. */
export function stepsToThreshold(s: StepSeries, threshold: number, better: 'higher' | 'lower' = 'higher'): number | null {
  for (let i = 0; i < s.y.length; i++) {
    const v = s.y[i];
    if (v === null || !Number.isFinite(v)) continue;
    if (better === 'higher' ? v >= threshold : v <= threshold) return s.steps[i];
  }
  return null;
}

export type VerdictLevel = 'stable' | 'watch' | 'collapsed' | 'too-early' | 'unchecked';

export interface Verdict {
  readonly level: VerdictLevel;
  /** One sentence saying why, with the step where it happened. */
  readonly reason: string;
}

export interface VerdictInput {
  readonly success: StepSeries;
  readonly alerts: readonly { severity: 'info' | 'warning' | 'critical'; message: string; firstStep: number }[];
  /** Steps where the gradient norm or the loss was NaN/±Infinity. */
  readonly nonFiniteSteps: readonly number[];
  /** Minimum finite success points before calling a run stable. */
  readonly minPoints?: number;
  /**
   * Steps the run logged (its longest series, any metric). A run with too few success points but this many steps
   * is not "too short": it logs no success rate (an imported verl run of 335 steps), and is judged on its alerts.
   */
  readonly loggedSteps?: number;
  /**
   * Episodes behind each training-success point (rollout.tasksPerStep × rollout.groupSize), for its binomial
   * noise; null/absent when unknown (the noise is then estimated from the series' step-to-step spread).
   */
  readonly episodesPerPoint?: number | null;
  /**
   * The last step the collapse detector has checked (detectedThroughOf the record), null when it never has; and
   * the run's last step. Without a check, "no alerts" is no evidence of stability. Absent: taken as checked.
   */
  readonly detector?: { readonly through: number | null; readonly lastStep: number };
}

/** z at which a fall counts as beyond sampling noise: the detector's held-out test (successCollapse.valZ). */
export const FALL_Z = 3;

export interface SuccessFall {
  readonly best: number;
  readonly bestStep: number;
  readonly final: number;
  readonly finalStep: number;
  /** Means over this many points (best window and last window). */
  readonly window: number;
  /** Standard errors between the two means; Infinity when the series has no spread at all. */
  readonly z: number;
}

/**
 * The largest fall of success from its best window to its last one: means of k consecutive points
 * (k = a third of the points, 1…10), the best window ending before the last one starts. z: with n episodes per
 * point, the two-proportion test with the pooled rate on k·n episodes each (as the detector's success_collapse
 * rule tests validations); without n, the spread of step-to-step differences (σ ≈ rms(Δ)/√2, conservative when
 * the series trends). Null with fewer than 2 finite points or no fall.
 */
export function successFall(s: StepSeries, episodesPerPoint?: number | null): SuccessFall | null {
  const pts: { step: number; y: number }[] = [];
  for (let i = 0; i < s.y.length; i++) {
    const v = s.y[i];
    if (v !== null && Number.isFinite(v)) pts.push({ step: s.steps[i], y: v });
  }
  if (pts.length < 2) return null;
  const k = Math.min(10, Math.max(1, Math.floor(pts.length / 3)));
  const mean = (from: number) => pts.slice(from, from + k).reduce((a, p) => a + p.y, 0) / k;
  const last = pts.length - k;
  let bestAt = 0;
  let best = -Infinity;
  for (let i = 0; i + k <= last; i++) {
    const m = mean(i);
    if (m > best) {
      best = m;
      bestAt = i;
    }
  }
  const final = mean(last);
  if (!(best > final)) return null;
  let z: number;
  const n = episodesPerPoint;
  if (n !== null && n !== undefined && Number.isInteger(n) && n > 0) {
    const pooled = (best + final) / 2;
    const se = Math.sqrt(pooled * (1 - pooled) * (2 / (k * n)));
    z = se > 0 ? (best - final) / se : Infinity;
  } else {
    let sq = 0;
    for (let i = 1; i < pts.length; i++) sq += (pts[i].y - pts[i - 1].y) ** 2;
    const sigma = Math.sqrt(sq / (pts.length - 1) / 2);
    const se = sigma * Math.sqrt(2 / k);
    z = se > 0 ? (best - final) / se : Infinity;
  }
  // The best window's step: where its best point is.
  const win = pts.slice(bestAt, bestAt + k);
  const bestStep = win.reduce((a, p) => (p.y > a.y ? p : a), win[0]).step;
  return { best, bestStep, final, finalStep: pts[pts.length - 1].step, window: k, z };
}

/**
 * Collapsed: a critical alert or a non-finite gradient/loss — never on the success curve alone, so the verdict
 * cannot say "Collapsed" while the detector (the Alerts column) says nothing. Watch: warnings, or success that
 * fell below half of a real peak (≥ 0.2) by more than sampling noise explains (z ≥ FALL_Z) with no alert. Too
 * early: fewer than `minPoints` finite points. Not checked: nothing of the above, but the detector has not read
 * the run (or not its last steps), so its empty alert list proves nothing. Otherwise stable; a fall within noise
 * is said in the reason.
 */
export function verdict(input: VerdictInput): Verdict {
  const critical = [...input.alerts].filter((a) => a.severity === 'critical').sort((a, b) => a.firstStep - b.firstStep);
  if (critical.length > 0) return { level: 'collapsed', reason: `step ${critical[0].firstStep}: ${critical[0].message}` };
  if (input.nonFiniteSteps.length > 0) {
    const first = Math.min(...input.nonFiniteSteps);
    return { level: 'collapsed', reason: `step ${first}: non-finite gradient norm or loss` };
  }
  const warnings = input.alerts.filter((a) => a.severity === 'warning');
  if (warnings.length > 0) {
    const w = [...warnings].sort((a, b) => a.firstStep - b.firstStep)[0];
    return {
      level: 'watch',
      reason: `${warnings.length} warning${warnings.length > 1 ? 's' : ''}; first at step ${w.firstStep}: ${w.message}`,
    };
  }
  const unchecked = input.detector !== undefined && input.detector.through === null;
  const fall = successFall(input.success, input.episodesPerPoint);
  const halved = fall !== null && fall.best >= 0.2 && fall.final < fall.best / 2;
  const means = fall && fall.window > 1 ? ` (means of ${fall.window} steps)` : '';
  if (fall && halved && fall.z >= FALL_Z) {
    return {
      level: 'watch',
      reason: `success fell from ${fmt(fall.best)} (step ${fall.bestStep}) to ${fmt(fall.final)} (step ${fall.finalStep})${means}, beyond sampling noise (z = ${fmtZ(fall.z)}); ${unchecked ? 'the detector has not checked this run — run it to check' : 'no detector alert on this run'}`,
    };
  }
  const finite = input.success.y.filter((v) => v !== null && Number.isFinite(v)).length;
  const minPoints = input.minPoints ?? 5;
  const plural = (n: number, what: string) => `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`;
  // The level's label already says "Too short": the reason gives the count, the run's own when it is known.
  if (finite < minPoints && (input.loggedSteps === undefined || input.loggedSteps < minPoints)) {
    return {
      level: 'too-early',
      reason: input.loggedSteps === undefined ? plural(finite, 'logged success point') : plural(input.loggedSteps, 'logged step'),
    };
  }
  const noSuccess =
    finite < minPoints
      ? finite === 0
        ? 'no success rate logged'
        : `only ${plural(finite, 'success point')} of ${plural(input.loggedSteps!, 'logged step')}`
      : null;
  const det = input.detector;
  if (det && det.through === null)
    return {
      level: 'unchecked',
      reason: `no alerts, but the collapse detector has not checked this run: run it to judge${noSuccess ? ` (${noSuccess})` : ''}`,
    };
  if (det && det.through !== null && det.through < det.lastStep) {
    return {
      level: 'unchecked',
      reason: `the collapse detector has checked steps up to ${det.through} of ${det.lastStep}: run it again to judge the rest`,
    };
  }
  if (fall && halved) {
    return {
      level: 'stable',
      reason: `no alerts, finite gradients; success went from ${fmt(fall.best)} to ${fmt(fall.final)}${means}, within sampling noise (z = ${fmtZ(fall.z)} < ${FALL_Z})`,
    };
  }
  if (noSuccess)
    return {
      level: 'stable',
      reason: `no alerts, finite gradients over ${plural(input.loggedSteps!, 'logged step')}; ${noSuccess}, so no fall in success to judge`,
    };
  return { level: 'stable', reason: 'no alerts, finite gradients, no drop in success beyond sampling noise' };
}

function fmtZ(z: number): string {
  return Number.isFinite(z) ? z.toFixed(1) : '∞';
}

function fmt(v: number): string {
  return v.toFixed(2);
}
