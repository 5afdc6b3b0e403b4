/**
 * Metric series of one run that grow while it trains: loaded once through `runs.metrics`, then extended by
 * `run.metrics` events. Pure data structure (no Svelte) so merging is unit-tested.
 */
import { nanMeansNotApplicable } from '../../shared/metrics';

export interface LiveSeries {
  readonly steps: number[];
  readonly y: (number | null)[];
  /** Non-finite points and their kind (NaN, Infinity, -Infinity). */
  readonly nonFinite: { step: number; value: string }[];
}

export type SeriesByKey = ReadonlyMap<string, LiveSeries>;

export function fromStored(
  list: readonly {
    key: string;
    steps: readonly number[];
    y: readonly (number | null)[];
    nonFinite: readonly { step: number; value: string }[];
  }[],
): Map<string, LiveSeries> {
  const m = new Map<string, LiveSeries>();
  for (const s of list) m.set(s.key, { steps: s.steps.slice(), y: s.y.slice(), nonFinite: s.nonFinite.map((n) => ({ ...n })) });
  return m;
}

/** A live metric record: nulls are non-finite values; `nonFinite` says which kind (absent from older servers). */
export interface LiveRecord {
  readonly step: number;
  readonly values: Record<string, number | null>;
  readonly nonFinite?: Record<string, string>;
}

/**
 * Appends live records for the given keys, ignoring steps already present (an event can overlap the initial
 * load) and keeping steps ascending. Returns a new map (new arrays for touched keys) so reactive views update.
 * A non-finite value is kept as a gap with its marker under the store's rule (src/main/store/runStore.ts
 * buildSeries): ±Infinity always; NaN only once the metric has had a finite value and when NaN is not the
 * metric's "not applicable" (validation keys between validations). So the step-0 validation record, NaN for
 * every training metric, adds no point and no marker, as a reload would show it.
 */
export function appendRecords(prev: SeriesByKey, keys: readonly string[], records: readonly LiveRecord[]): Map<string, LiveSeries> {
  const next = new Map(prev);
  for (const key of keys) {
    const old = prev.get(key) ?? { steps: [], y: [], nonFinite: [] };
    const lastStep = old.steps.length ? old.steps[old.steps.length - 1] : -Infinity;
    const fresh = records.filter((r) => r.step > lastStep && key in r.values).sort((a, b) => a.step - b.step);
    if (fresh.length === 0) continue;
    const steps = old.steps.slice();
    const y = old.y.slice();
    const nonFinite = old.nonFinite.slice();
    let seenFinite = old.y.some((v) => v !== null);
    const notApplicable = nanMeansNotApplicable(key);
    let changed = false;
    for (const r of fresh) {
      const v = r.values[key];
      if (typeof v === 'number' && Number.isFinite(v)) {
        seenFinite = true;
        steps.push(r.step);
        y.push(v);
        changed = true;
        continue;
      }
      const kind = r.nonFinite?.[key] ?? 'NaN';
      if (kind === 'NaN' && (!seenFinite || notApplicable)) continue;
      steps.push(r.step);
      y.push(null);
      nonFinite.push({ step: r.step, value: kind });
      changed = true;
    }
    if (changed) next.set(key, { steps, y, nonFinite });
  }
  return next;
}
