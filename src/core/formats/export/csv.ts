/**
 * CSV export: a `step` column, then one column per metric key; an empty cell where a step has no value for the
 * key, `NaN` / `inf` / `-inf` for non-finite values (the spellings this lab's CSV importer and pandas'
 * read_csv both read back), numbers in JavaScript's shortest round-trip form so a re-import gives the same
 * doubles. Header cells are quoted per RFC 4180 when they hold a comma, quote or line break.
 */
import type { MetricRecord } from '../../../shared/metrics';
import { CHUNK_BYTES, exportableKeys } from './keys';

export interface CsvExportOptions {
  /** Columns after `step`, in order; default: exportableKeys(records) (needs a re-iterable input). */
  keys?: readonly string[];
}

export function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return 'inf';
  if (v === Number.NEGATIVE_INFINITY) return '-inf';
  return String(v);
}

/** The CSV text in chunks of about CHUNK_BYTES characters, header first. */
export function* csvChunks(records: Iterable<MetricRecord>, opts: CsvExportOptions = {}): Generator<string> {
  const keys = opts.keys ?? exportableKeys(records);
  if (keys.includes('step')) throw new Error('a metric named "step" would collide with the CSV step column; rename it before exporting');
  let out = `step${keys.map((k) => `,${csvCell(k)}`).join('')}\n`;
  for (const r of records) {
    let line = String(r.step);
    for (const k of keys) {
      const v = r.values[k];
      line += v === undefined ? ',' : `,${csvNumber(v)}`;
    }
    out += `${line}\n`;
    if (out.length >= CHUNK_BYTES) {
      yield out;
      out = '';
    }
  }
  if (out.length > 0) yield out;
}
