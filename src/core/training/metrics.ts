/**
 * Building one step's MetricRecord: every key of the catalog (src/shared/metrics.ts) is present every step,
 * NaN where it does not apply (spec §4; the detector and charts rely on a dense stream). Unknown keys are a
 * programming error and throw, so a typo cannot silently create a new series.
 */
import { METRIC_CATALOG, isMetricKey, isRolloutRsOptionKey, type MetricKey, type MetricRecord } from '../../shared/metrics';

export class StepMetrics {
  private readonly values: Record<string, number> = {};

  constructor(readonly step: number) {
    for (const d of METRIC_CATALOG) this.values[d.key] = NaN;
  }

  set(key: MetricKey, value: number): this {
    if (!isMetricKey(key)) throw new Error(`StepMetrics.set: "${String(key)}" is not in the metric catalog`);
    this.values[key] = value;
    return this;
  }

  /**
   * Dynamic keys: per-env / per-task-type validation (`val/<env>/<type>/success_rate`) and the per-option
   * rejection metrics of the rollout_rs options a run enables (`rollout_corr/rollout_rs_<option>_<stat>`).
   */
  setDynamic(key: string, value: number): this {
    if (!/^val\/[^/]+\/[^/]+\/success_rate$/.test(key) && !isRolloutRsOptionKey(key))
      throw new Error(`StepMetrics.setDynamic: "${key}" is not a dynamic validation or rollout_rs option key`);
    this.values[key] = value;
    return this;
  }

  get(key: string): number {
    return this.values[key] ?? NaN;
  }

  toRecord(): MetricRecord {
    return { step: this.step, values: { ...this.values } };
  }
}

/** Set a catalog key or a dynamic one (validation per task type, rollout_rs per option); anything else throws. */
export function setMetric(m: StepMetrics, key: string, value: number): void {
  if (isMetricKey(key)) m.set(key, value);
  else m.setDynamic(key, value);
}

/** Mean of finite values; NaN for an empty list (n/a, not 0). */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Population standard deviation (diagnostic, matches torch.std(unbiased=False) used for logging spreads). */
export function std(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return Math.sqrt(s / xs.length);
}

export function maxOf(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => (b > a ? b : a), -Infinity);
}

export function minOf(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => (b < a ? b : a), Infinity);
}

/** Keys whose values depend on wall time; excluded from determinism and resume comparisons. */
export function isTimingKey(key: string): boolean {
  return key.startsWith('perf/') && key !== 'perf/total_tokens';
}
