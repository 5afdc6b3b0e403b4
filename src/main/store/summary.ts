/**
 * Headline numbers of a run (RunSummary.summary), folded incrementally from its metric records: the last finite
 * value of a few catalog keys and the best of the success rates (`best/<key>`).
 */
import type { MetricRecord } from '../../shared/metrics';
import { TRAIN_SUCCESS_KEYS, VALIDATION_KEYS, headlineOf } from '../../shared/headline';

export const SUMMARY_LAST_KEYS = [
  'episode/success_rate',
  'episode/reward_mean',
  // Task and validation scores: what imported verl/TRL runs report where lab runs report success.
  'episode/score_mean',
  'val/score_mean',
  'episode/valid_format_ratio',
  'episode/valid_action_ratio',
  'val/success_rate',
  // The n behind the last validation success, for its Wilson interval in the runs table.
  'val/episodes',
  'actor/grad_norm',
  'actor/entropy',
] as const;
export const SUMMARY_BEST_KEYS = ['episode/success_rate', 'val/success_rate', 'val/score_mean'] as const;

export type RunSummaryValues = Record<string, number | null>;

export function foldSummary(summary: RunSummaryValues, rec: MetricRecord): RunSummaryValues {
  const out = { ...summary };
  for (const k of SUMMARY_LAST_KEYS) {
    const v = rec.values[k];
    if (v !== undefined && Number.isFinite(v)) out[k] = v;
  }
  for (const k of SUMMARY_BEST_KEYS) {
    const v = rec.values[k];
    if (v === undefined || !Number.isFinite(v)) continue;
    const prev = out[`best/${k}`];
    if (prev === undefined || prev === null || v > prev) out[`best/${k}`] = v;
  }
  return out;
}

/** The number `runs.list` sorts by for `sortBy: 'success'`: validation success if any, else training success. */
export function successOf(summary: RunSummaryValues): number {
  // Scores stand in for success rates on imported runs that log no success (shared/headline.ts).
  return (headlineOf(summary, VALIDATION_KEYS) ?? headlineOf(summary, TRAIN_SUCCESS_KEYS))?.value ?? -1;
}
