/** The detector's rule family: one signature for every rule in the catalog (rules/). */
import type { MetricRecord } from '../../shared/metrics';
import type { DetectorConfig } from './config';
import type { Hints } from './hints';

export type Severity = 'info' | 'warning' | 'critical';

/** One step's verdict of a rule on one metric. The engine merges consecutive findings into an alert. */
export interface Finding {
  readonly metric: string;
  readonly severity: Severity;
  /**
   * Plain-language statement with the numbers (what happened at this step), or a function that builds it from
   * values fixed when the finding was made. The detector builds it only when the alert's text is read: an alert
   * on a noisy imported run is updated at nearly every step and read once per chunk, and formatting every
   * update's numbers was ~13 % of a JSONL import.
   */
  readonly message: string | (() => string);
  /** What to try. */
  readonly hint: string;
  /**
   * The point the message cites: the spike's value, or the best level the metric fell from (a smoothed mean is
   * cited at the step it was reached). The alert's evidence window is widened to hold its step.
   */
  readonly peak?: { readonly step: number; readonly value: number };
  /** The level this finding crossed (in the metric's units), drawn as the evidence chart's threshold line. */
  readonly threshold?: number;
  /**
   * The first logged step of the event (a smoothed mean or a streak fires points after the value that started
   * it): a new alert's window opens here, so it covers the event it describes.
   */
  readonly onset?: number;
  /** Every logged point of `metric` the message quotes (quote.ts): kept in the alert's evidence window. */
  readonly quotes?: readonly { readonly step: number; readonly value: number }[];
}

export interface RuleInstance {
  /** Feed one step's record (steps in increasing order); return this step's findings. */
  feed(rec: MetricRecord): Finding[];
}

export type RuleId =
  | 'non_finite'
  | 'grad_norm_spike'
  | 'validity_drop'
  | 'success_collapse'
  | 'entropy_shift'
  | 'kl_drift'
  | 'clip_fraction_drift'
  | 'dead_signal'
  | 'length_runaway'
  | 'train_inference_mismatch'
  | 'engine_gap'
  | 'response_collapse'
  | 'format_hacking';

/**
 * A rule's metric requirement: every key of `allOf`, and at least one key of `anyOf` when it is non-empty
 * (`anyOf: ['*']` = any metric at all). Rules that watch several alternative signals (success or reward, PPO KL
 * or KL loss) use `anyOf`; a rule that reads one signal uses `allOf`.
 */
export interface MetricNeeds {
  readonly allOf?: readonly string[];
  readonly anyOf?: readonly string[];
}

export interface RuleDef {
  readonly id: RuleId;
  readonly title: string;
  /** What the rule watches and why (spec §4). */
  readonly description: string;
  /** Metric keys (src/shared/metrics.ts) the rule reads; `*` for any. */
  readonly metrics: readonly string[];
  /**
   * Which of those keys a run must have for the rule to judge anything (coverage.ts). An imported run carries
   * only the keys its source logged, so a rule whose needs are not met is "not applicable", not "quiet".
   */
  readonly needs: MetricNeeds;
  enabled(cfg: DetectorConfig): boolean;
  /** A rule instance; its findings' hints come from `hints` (hints.ts: fitted to the run's recipe). */
  create(cfg: DetectorConfig, hints: Hints): RuleInstance;
}

/** The finite value of `key` in `rec`, or undefined. */
export function finite(rec: MetricRecord, key: string): number | undefined {
  const v = rec.values[key];
  return v !== undefined && Number.isFinite(v) ? v : undefined;
}
