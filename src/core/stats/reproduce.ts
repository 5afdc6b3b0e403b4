/**
 * Comparing a run's metric stream with its rerun (`arlarena reproduce`). Pure: the bundle code in
 * src/main reads the streams and reruns the config; this says whether the numbers reproduce.
 *
 * Verdicts, first that holds:
 *   bit-identical      every deterministic metric (all but perf/* timings) equal at every step (NaN = NaN): what
 *                      the same backend gives (a run is a function of config, seed, app version and backend)
 *   within-tolerance   not identical, but every compared value within float tolerance of the original:
 *                      |rerun − original| ≤ atol + rtol·|original| (FLOAT_TOLERANCE) — what another backend gives
 *                      (wasm vs native TensorFlow vs GPU sum in other orders); "same within float tolerance"
 *   within-band        ≥ 90 % of the rerun's points of every metric inside the original's band: min/max over ±5
 *                      steps, widened by 10 % of the metric's range or 1 % of the value, and never by less than
 *                      the float tolerance
 *                      (a near-constant metric's tiny range used to make a band no backend could hit)
 *   diverged           otherwise
 * The tolerance is absolute plus relative, like numpy's allclose, and is not scaled to a metric's range: a metric
 * that barely moves (a KL coefficient, a clip fraction at 0) is held to the same float tolerance as any other.
 */
import type { MetricRecord } from '../../shared/metrics';

export type ReproduceVerdict = 'bit-identical' | 'within-tolerance' | 'within-band' | 'diverged';

/**
 * Float tolerance across backends: float32 work summed in another order (tfjs-wasm, tfjs-node, a GPU) differs by
 * a few float32 ulps of the quantities behind each metric; runs rerun on another backend were seen to differ by at
 * most 5e-6 on every metric. atol covers metrics near 0 (a KL of 1e-7 computed from log-probs of order 1), rtol
 * the large ones (a gradient norm of 40).
 */
export const FLOAT_TOLERANCE = { atol: 1e-5, rtol: 1e-4 } as const;

export interface Tolerance {
  readonly atol: number;
  readonly rtol: number;
}

export interface KeyComparison {
  readonly key: string;
  readonly identical: boolean;
  /** Every compared value within the float tolerance (non-finite values must match exactly). */
  readonly withinTolerance: boolean;
  /** Share of compared rerun points inside the original's band. */
  readonly inBand: number;
  readonly maxAbsDiff: number;
}

export interface ComparisonReport {
  readonly verdict: ReproduceVerdict;
  readonly stepsCompared: number;
  /**
   * The first and last step compared (null when none was): a trainer's stream starts at step 0, its validation before
   * any update, so a run of N RL steps compares N + 1 steps, 0–N.
   */
  readonly firstStep: number | null;
  readonly lastStep: number | null;
  /** The float tolerance the within-tolerance verdict was judged with. */
  readonly tolerance: Tolerance;
  /** Largest |rerun − original| over every compared finite value. */
  readonly maxAbsDiff: number;
  readonly keys: KeyComparison[];
}

const BAND_HALF_WINDOW = 5;
const BAND_WIDEN = 0.1;
const BAND_MIN_SHARE = 0.9;
/** And by a share of the value itself, for metrics that barely move (a learning rate, a KL coefficient). */
const BAND_REL = 0.01;

function isDeterministicKey(k: string): boolean {
  return !k.startsWith('perf/');
}

/** |b − a| within atol + rtol·|a|. */
export function withinTolerance(a: number, b: number, tol: Tolerance = FLOAT_TOLERANCE): boolean {
  return Math.abs(b - a) <= tol.atol + tol.rtol * Math.abs(a);
}

export function compareStreams(
  original: readonly MetricRecord[],
  rerun: readonly MetricRecord[],
  tol: Tolerance = FLOAT_TOLERANCE,
): ComparisonReport {
  const byStep = new Map(rerun.map((r) => [r.step, r]));
  const common = original.filter((r) => byStep.has(r.step));
  const keys = [...new Set(original.flatMap((r) => Object.keys(r.values)))].filter(isDeterministicKey).sort();
  const out: KeyComparison[] = [];
  for (const key of keys) {
    const ov = original.map((r) => r.values[key]);
    const finite = ov.filter((v) => v !== undefined && Number.isFinite(v)) as number[];
    const range = finite.length ? Math.max(...finite) - Math.min(...finite) : 0;
    let identical = true;
    let close = true;
    let inBand = 0;
    let n = 0;
    let maxAbs = 0;
    for (const o of common) {
      const a = o.values[key];
      const b = byStep.get(o.step)!.values[key];
      if (a === undefined && b === undefined) continue;
      if (!Object.is(a, b)) identical = false;
      if (a === undefined || b === undefined || !Number.isFinite(a)) {
        n++;
        if (Object.is(a, b)) inBand++;
        else close = false;
        continue;
      }
      n++;
      if (!Number.isFinite(b)) {
        close = false;
        continue;
      }
      maxAbs = Math.max(maxAbs, Math.abs(a - b));
      if (!withinTolerance(a, b, tol)) close = false;
      const idx = original.indexOf(o);
      const win = original
        .slice(Math.max(0, idx - BAND_HALF_WINDOW), idx + BAND_HALF_WINDOW + 1)
        .map((r) => r.values[key])
        .filter((v): v is number => v !== undefined && Number.isFinite(v));
      // A share of the metric's range, but never less than the float tolerance: a near-constant metric's range
      // (a KL coefficient, a clip fraction at 0) would otherwise give a band that float rounding alone leaves.
      const widen = Math.max(BAND_WIDEN * range, BAND_REL * Math.abs(a), tol.atol + tol.rtol * Math.abs(a));
      const lo = Math.min(...win) - widen;
      const hi = Math.max(...win) + widen;
      if (b >= lo && b <= hi) inBand++;
    }
    out.push({ key, identical, withinTolerance: close, inBand: n ? inBand / n : 1, maxAbsDiff: maxAbs });
  }
  const complete = common.length > 0 && common.length === original.length;
  const verdict: ReproduceVerdict =
    complete && out.every((k) => k.identical)
      ? 'bit-identical'
      : complete && out.every((k) => k.withinTolerance)
        ? 'within-tolerance'
        : common.length > 0 && out.every((k) => k.inBand >= BAND_MIN_SHARE)
          ? 'within-band'
          : 'diverged';
  return {
    verdict,
    stepsCompared: common.length,
    firstStep: common.length ? Math.min(...common.map((r) => r.step)) : null,
    lastStep: common.length ? Math.max(...common.map((r) => r.step)) : null,
    tolerance: { atol: tol.atol, rtol: tol.rtol },
    maxAbsDiff: out.reduce((m, k) => Math.max(m, k.maxAbsDiff), 0),
    keys: out,
  };
}

/** One line naming a verdict, the tolerance with it: "SAME WITHIN FLOAT TOLERANCE (|Δ| ≤ 1e-5 + 1e-4·|x|; max |Δ| 5e-6)". */
export function verdictLabel(r: Pick<ComparisonReport, 'verdict' | 'tolerance' | 'maxAbsDiff'>): string {
  const tol = `|Δ| ≤ ${r.tolerance.atol} + ${r.tolerance.rtol}·|x| at every step`;
  const max = `max |Δ| ${Number(r.maxAbsDiff.toPrecision(3))}`;
  switch (r.verdict) {
    case 'bit-identical':
      return 'BIT-IDENTICAL';
    case 'within-tolerance':
      return `SAME WITHIN FLOAT TOLERANCE (${tol}; ${max})`;
    case 'within-band':
      return `WITHIN BAND (beyond float tolerance, ${tol}; ${max})`;
    case 'diverged':
      return `DIVERGED (${max})`;
  }
}
