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

export type VerdictLevel = 'stable' | 'watch' | 'collapsed' | 'too-early';

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
}

/**
 * Collapsed: a critical alert, a non-finite gradient/loss, or success that fell below half of a real peak
 * (≥ 0.2). Watch: warnings only. Too early: fewer than `minPoints` finite points. Otherwise stable.
 */
export function verdict(input: VerdictInput): Verdict {
  const critical = [...input.alerts].filter((a) => a.severity === 'critical').sort((a, b) => a.firstStep - b.firstStep);
  if (critical.length > 0) return { level: 'collapsed', reason: `step ${critical[0].firstStep}: ${critical[0].message}` };
  if (input.nonFiniteSteps.length > 0) {
    const first = Math.min(...input.nonFiniteSteps);
    return { level: 'collapsed', reason: `step ${first}: non-finite gradient norm or loss` };
  }
  const h = headline(input.success);
  if (h.best !== null && h.final !== null && h.best >= 0.2 && h.final < h.best / 2) {
    return { level: 'collapsed', reason: `success fell from ${fmt(h.best)} (step ${h.bestStep}) to ${fmt(h.final)} (step ${h.finalStep})` };
  }
  const warnings = input.alerts.filter((a) => a.severity === 'warning');
  if (warnings.length > 0) {
    const w = [...warnings].sort((a, b) => a.firstStep - b.firstStep)[0];
    return { level: 'watch', reason: `${warnings.length} warning${warnings.length > 1 ? 's' : ''}; first at step ${w.firstStep}: ${w.message}` };
  }
  const finite = input.success.y.filter((v) => v !== null && Number.isFinite(v)).length;
  if (finite < (input.minPoints ?? 5)) return { level: 'too-early', reason: `too short to judge: ${finite} logged step${finite === 1 ? '' : 's'}` };
  return { level: 'stable', reason: 'no alerts, finite gradients, no drop in success' };
}

function fmt(v: number): string {
  return v.toFixed(2);
}
