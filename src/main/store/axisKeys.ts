/**
 * Logged keys a chart can be drawn against instead of the step, as W&B offers a monotone logged value as the
 * x-axis: counters of progress (epochs, global steps, iterations, tokens or samples seen, elapsed time) that
 * never decrease over a run. A key is offered when its name says it counts progress and, in every run that logs
 * it, its finite values never go down and end above where they started (a resumed log whose epoch counter starts
 * again, or a per-step token count, would fold or scramble the lines). Values at fewer than 2 steps say nothing.
 * The lab's own wall-time and token axes (perf/wall_s, perf/total_tokens) are the x-axis menu's fixed choices.
 */
import type { MetricRecord } from '../../shared/metrics';

/** Names of progress counters: verl's training/epoch and training/global_step, TRL's train/epoch and
 * train/num_input_tokens_seen, W&B's _runtime and _timestamp, CleanRL's global_step, SB3's time/total_timesteps. */
const COUNTER =
  /epoch|global_step|(^|[/_])step$|iteration|timesteps|tokens_seen|total_tokens|samples_seen|consumed|elapsed|runtime|timestamp|wall/i;
/** Per-step quantities whose names share those words (verl's perf/total_num_tokens is the step's count). */
const PER_STEP = /timing|per_token|per_s(ec)?$|_ms$|throughput|mfu|total_num_tokens/i;
const FIXED = new Set(['perf/wall_s', 'perf/total_tokens']);

/** Whether a name is a progress counter's (before its values are looked at). */
export function isCounterName(key: string): boolean {
  return COUNTER.test(key) && !PER_STEP.test(key) && !FIXED.has(key);
}

/** The counter keys of one run whose values never decrease (finite values, in file order) and grow overall. */
export function monotoneCounters(rows: readonly MetricRecord[]): Map<string, boolean> {
  const state = new Map<string, { first: number; last: number; n: number; ok: boolean }>();
  for (const r of rows) {
    for (const key in r.values) {
      const v = r.values[key];
      if (!Number.isFinite(v)) continue;
      let s = state.get(key);
      if (s === undefined) {
        if (!isCounterName(key)) continue;
        state.set(key, (s = { first: v, last: v, n: 0, ok: true }));
      }
      if (v < s.last) s.ok = false;
      s.last = v;
      s.n++;
    }
  }
  const out = new Map<string, boolean>();
  for (const [k, s] of state) out.set(k, s.ok && s.n >= 2 && s.last > s.first);
  return out;
}

/** Keys every run that logs them counts up with (at least one run logs each), sorted. */
export function axisKeys(runs: readonly (readonly MetricRecord[])[]): string[] {
  const verdict = new Map<string, boolean>();
  for (const rows of runs) for (const [k, ok] of monotoneCounters(rows)) verdict.set(k, (verdict.get(k) ?? true) && ok);
  return [...verdict]
    .filter(([, ok]) => ok)
    .map(([k]) => k)
    .sort();
}
