/**
 * JSONL in verl's file-logger shape: one `{"step":N,"data":{…}}` per line, compact, keys in record order.
 *
 * verl's FileLogger (verl/utils/tracking.py) writes `orjson.dumps({"step": step, "data": data})`, and orjson
 * serialises NaN and ±Infinity as `null`. This export writes NaN as `null` the same way (verl-jsonl importers,
 * this lab's included, read `null` back as NaN), but ±Infinity as `1e999` / `-1e999`: still valid JSON, and
 * every JSON reader (JSON.parse, Python's json, orjson) reads it as ±inf, so an infinite value survives the
 * round trip instead of turning into NaN. A key absent from a step is absent from its `data`.
 */
import type { MetricRecord } from '../../../shared/metrics';
import { CHUNK_BYTES, exportableKeys } from './keys';

export interface VerlJsonlExportOptions {
  /** Keys written per step, in order; default: exportableKeys(records) (needs a re-iterable input). */
  keys?: readonly string[];
}

export function jsonNumber(v: number): string {
  if (Number.isNaN(v)) return 'null';
  if (v === Number.POSITIVE_INFINITY) return '1e999';
  if (v === Number.NEGATIVE_INFINITY) return '-1e999';
  return JSON.stringify(v);
}

/** The JSONL text in chunks of about CHUNK_BYTES characters. */
export function* verlJsonlChunks(records: Iterable<MetricRecord>, opts: VerlJsonlExportOptions = {}): Generator<string> {
  const keys = opts.keys ?? exportableKeys(records);
  const quoted = keys.map((k) => JSON.stringify(k));
  let out = '';
  for (const r of records) {
    let data = '';
    for (let i = 0; i < keys.length; i++) {
      const v = r.values[keys[i]];
      if (v === undefined) continue;
      data += `${data.length === 0 ? '' : ','}${quoted[i]}:${jsonNumber(v)}`;
    }
    out += `{"step":${JSON.stringify(r.step)},"data":{${data}}}\n`;
    if (out.length >= CHUNK_BYTES) {
      yield out;
      out = '';
    }
  }
  if (out.length > 0) yield out;
}
