/**
 * What `arlarena show` needs of a run's metrics — how many records, the last one, each asked-for key's latest
 * value — read without loading the stream: records are counted in one pass over the bytes, and the latest values
 * come from the file's end, read backwards a slice at a time until every key is found. Memory is one slice, so a
 * 10M-row imported run costs what a 10-row one does (reading it whole took 3.1 GB).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { MetricRecord } from '../../shared/metrics';
import { decodeMetricRecord } from './jsonl';

const SLICE_BYTES = 1024 * 1024;

export interface MetricTail {
  /** Complete, non-blank lines (a torn last line is not counted). */
  readonly records: number;
  /** The last record that parses, or null when there is none. */
  readonly last: MetricRecord | null;
  /** Each key's latest value with its step (keys never logged are absent). */
  readonly latest: ReadonlyMap<string, { step: number; value: number }>;
}

export async function metricTail(file: string, keys: readonly string[]): Promise<MetricTail> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { records: 0, last: null, latest: new Map() };
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    const buf = Buffer.alloc(SLICE_BYTES);
    // Count complete non-blank lines.
    let records = 0;
    let lineHasText = false;
    for (let pos = 0; pos < size;) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(SLICE_BYTES, size - pos), pos);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i++) {
        const c = buf[i];
        if (c === 10) {
          if (lineHasText) records++;
          lineHasText = false;
        } else if (c !== 13 && c !== 32) lineHasText = true;
      }
      pos += bytesRead;
    }
    // Backwards from the end: whole lines only (a line cut by a slice boundary waits for the slice before it).
    const latest = new Map<string, { step: number; value: number }>();
    let last: MetricRecord | null = null;
    let carry: Buffer = Buffer.alloc(0);
    let end = size;
    while (end > 0 && (last === null || latest.size < keys.length)) {
      const start = Math.max(0, end - SLICE_BYTES);
      const slice = Buffer.alloc(end - start);
      await fh.read(slice, 0, slice.length, start);
      let text = Buffer.concat([slice, carry]);
      end = start;
      let cut = 0;
      if (start > 0) {
        // The first (partial) line belongs with the slice before.
        cut = text.indexOf(10) + 1;
        if (cut === 0) {
          carry = text;
          continue;
        }
        carry = text.subarray(0, cut);
        text = text.subarray(cut);
      } else carry = Buffer.alloc(0);
      const lines = text.toString('utf8').split('\n');
      for (let i = lines.length - 1; i >= 0; i--) {
        const line = lines[i].trim();
        if (!line) continue;
        let rec: MetricRecord | undefined;
        try {
          rec = decodeMetricRecord(JSON.parse(line));
        } catch {
          continue; // a torn last line
        }
        if (!rec) continue;
        last ??= rec;
        for (const k of keys) if (!latest.has(k) && rec.values[k] !== undefined) latest.set(k, { step: rec.step, value: rec.values[k] });
        if (latest.size === keys.length) break;
      }
    }
    return { records, last, latest };
  } finally {
    await fh.close();
  }
}

/**
 * Every record of a metrics stream, in file order, handed to `onRecord` as it is read (one slice in memory at a
 * time); lines that do not parse (a torn last line) are passed over, as a whole read passes them.
 */
export async function forEachMetric(file: string, onRecord: (r: MetricRecord) => void): Promise<void> {
  let stream;
  try {
    await (await open(file, 'r')).close();
    stream = createReadStream(file, { highWaterMark: SLICE_BYTES });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  const line = (text: string) => {
    const t = text.trim();
    if (!t) return;
    let rec: MetricRecord | undefined;
    try {
      rec = decodeMetricRecord(JSON.parse(t));
    } catch {
      return;
    }
    if (rec) onRecord(rec);
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const text = rest + decoder.decode(chunk, { stream: true });
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      line(text.slice(from, nl));
      from = nl + 1;
    }
    rest = text.slice(from);
  }
  rest += decoder.decode();
  line(rest);
}
