/**
 * Which metric keys an export writes. A lab MetricRecord carries every catalog key, NaN where the metric does
 * not apply to the run (src/shared/metrics.ts), so a key that is NaN at every step is not part of this run and
 * is left out; a key with at least one real value is exported with all its values, NaN included, because a
 * NaN there may be a real non-finite loss the reader should see.
 */
import type { MetricRecord } from '../../../shared/metrics';

/** Keys with at least one non-NaN value, in first-seen order. */
export function exportableKeys(records: Iterable<MetricRecord>): string[] {
  const seen = new Set<string>();
  const live = new Set<string>();
  const order: string[] = [];
  for (const r of records) {
    for (const k in r.values) {
      if (!seen.has(k)) {
        seen.add(k);
        order.push(k);
      }
      if (!Number.isNaN(r.values[k])) live.add(k);
    }
  }
  return order.filter((k) => live.has(k));
}

/** Values are batched into chunks of about this many bytes (a 100k-step run never becomes one string). */
export const CHUNK_BYTES = 64 * 1024;
