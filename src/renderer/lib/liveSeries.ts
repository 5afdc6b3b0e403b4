/**
 * Metric series of one run that grow while it trains: loaded once through `runs.metrics`, then extended by
 * `run.metrics` events. Pure data structure (no Svelte) so merging is unit-tested.
 */
export interface LiveSeries {
  readonly steps: number[];
  readonly y: (number | null)[];
  /** Non-finite points; `value` is exact when loaded from the store, 'non-finite' when it came live. */
  readonly nonFinite: { step: number; value: string }[];
}

export type SeriesByKey = ReadonlyMap<string, LiveSeries>;

export function fromStored(list: readonly { key: string; steps: readonly number[]; y: readonly (number | null)[]; nonFinite: readonly { step: number; value: string }[] }[]): Map<string, LiveSeries> {
  const m = new Map<string, LiveSeries>();
  for (const s of list) m.set(s.key, { steps: s.steps.slice(), y: s.y.slice(), nonFinite: s.nonFinite.map((n) => ({ ...n })) });
  return m;
}

/**
 * Appends live records for the given keys, ignoring steps already present (an event can overlap the initial
 * load) and keeping steps ascending. Returns a new map (new arrays for touched keys) so reactive views update.
 */
export function appendRecords(prev: SeriesByKey, keys: readonly string[], records: readonly { step: number; values: Record<string, number | null> }[]): Map<string, LiveSeries> {
  const next = new Map(prev);
  for (const key of keys) {
    const old = prev.get(key) ?? { steps: [], y: [], nonFinite: [] };
    const lastStep = old.steps.length ? old.steps[old.steps.length - 1] : -Infinity;
    const fresh = records.filter((r) => r.step > lastStep && key in r.values).sort((a, b) => a.step - b.step);
    if (fresh.length === 0) continue;
    const steps = old.steps.slice();
    const y = old.y.slice();
    const nonFinite = old.nonFinite.slice();
    for (const r of fresh) {
      const v = r.values[key];
      steps.push(r.step);
      const finite = typeof v === 'number' && Number.isFinite(v);
      y.push(finite ? v : null);
      if (!finite) nonFinite.push({ step: r.step, value: 'non-finite' });
    }
    next.set(key, { steps, y, nonFinite });
  }
  return next;
}
