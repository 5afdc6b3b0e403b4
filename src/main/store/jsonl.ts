/**
 * Append-only JSON Lines files (metrics.jsonl, trajectories.jsonl).
 *
 * JSON cannot hold NaN or ±Infinity, but a NaN gradient norm is exactly what a collapse looks like, so metric
 * values are encoded explicitly: a finite number stays a number, non-finite values become the strings
 * "NaN", "Infinity", "-Infinity". A process killed mid-append leaves a torn last line (no trailing newline):
 * readers ignore it, and the next writer truncates it away before appending.
 */
import { open, stat, truncate } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { MetricRecord } from '../../shared/metrics';
import { storeFaults } from './faults';
import { fromNonFiniteKind, isNonFiniteKind, nonFiniteKind, type NonFiniteKind } from '../../shared/nonFinite';

export type EncodedValue = number | NonFiniteKind;

export function encodeValue(v: number): EncodedValue {
  return nonFiniteKind(v) ?? v;
}

export function decodeValue(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (isNonFiniteKind(v)) return fromNonFiniteKind(v);
  if (v === null) return NaN;
  return undefined;
}

/** Keys as JSON (quoted, escaped) with their colon: a run logs the same few dozen keys every step. */
const encodedKeys = new Map<string, string>();

/**
 * The same text as JSON.stringify({ step, values }) with non-finite values spelled out. A record whose values
 * are all finite (nearly every one) is the values object through JSON.stringify itself: its native number
 * formatting measured 0.45–0.5 CPU s per million float32-like values where building the text here took
 * 0.66–0.76 s; same key order (own properties, as for…in) and same escaping.
 */
export function encodeMetricRecord(rec: MetricRecord): string {
  const values = rec.values;
  let finite = true;
  for (const k in values) {
    if (!Number.isFinite(values[k])) {
      finite = false;
      break;
    }
  }
  if (finite) return `{"step":${JSON.stringify(rec.step)},"values":${JSON.stringify(values)}}`;
  return encodeSpelled(rec);
}

/** encodeMetricRecord for a record holding NaN or ±Infinity: built directly, each key escaped once. */
function encodeSpelled(rec: MetricRecord): string {
  let out = `{"step":${JSON.stringify(rec.step)},"values":{`;
  let first = true;
  for (const k in rec.values) {
    const v = rec.values[k];
    let key = encodedKeys.get(k);
    if (key === undefined) {
      key = `${JSON.stringify(k)}:`;
      if (encodedKeys.size < 10_000) encodedKeys.set(k, key);
    }
    out += (first ? key : `,${key}`) + (Number.isFinite(v) ? String(v) : JSON.stringify(encodeValue(v)));
    first = false;
  }
  return `${out}}}`;
}

/**
 * A parsed metrics line as a record, decoded in place: its parsed values object is kept, with spelled-out
 * non-finite values ("NaN" for a validation metric on a step without validation, on nearly every line) replaced
 * by the numbers. Building a new object key by key cost as much as JSON.parse itself (≈ 0.1 s of a Compare's first
 * read of 8 runs × 2,000 steps). A value that is not a number at all makes a copy without it (null reads as NaN).
 */
export function decodeMetricRecord(obj: unknown): MetricRecord | undefined {
  if (!obj || typeof obj !== 'object') return undefined;
  const o = obj as { step?: unknown; values?: unknown };
  if (typeof o.step !== 'number' || !Number.isInteger(o.step) || !o.values || typeof o.values !== 'object' || Array.isArray(o.values))
    return undefined;
  const raw = o.values as Record<string, unknown>;
  for (const k in raw) {
    const v = raw[k];
    if (typeof v === 'number') continue;
    const d = decodeValue(v);
    if (d === undefined) return { step: o.step, values: withoutInvalid(raw) };
    raw[k] = d;
  }
  return { step: o.step, values: raw as Record<string, number> };
}

function withoutInvalid(raw: Record<string, unknown>): Record<string, number> {
  const values: Record<string, number> = {};
  for (const k of Object.keys(raw)) {
    const v = decodeValue(raw[k]);
    // defineProperty: a key named "__proto__" stays a key instead of setting the object's prototype.
    if (v !== undefined) Object.defineProperty(values, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return values;
}

export interface JsonlChunk {
  /** Parsed objects of the complete lines read. */
  readonly items: unknown[];
  /** Byte offset just after the last complete line (where the next incremental read starts). */
  readonly offset: number;
  /** Complete lines that were not valid JSON (skipped). */
  readonly badLines: number;
  /** True when the file ended in a partial line (a torn write): it was ignored. */
  readonly tornTail: boolean;
}

/** Read the complete lines of a JSONL file from `fromOffset`; a torn last line is ignored. Missing file → empty. */
export async function readJsonl(file: string, fromOffset = 0): Promise<JsonlChunk> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { items: [], offset: 0, badLines: 0, tornTail: false };
    throw e;
  }
  try {
    const { size } = await fh.stat();
    if (size <= fromOffset) return { items: [], offset: Math.min(fromOffset, size), badLines: 0, tornTail: false };
    const buf = Buffer.alloc(size - fromOffset);
    await fh.read(buf, 0, buf.length, fromOffset);
    const lastNl = buf.lastIndexOf(0x0a);
    const complete = lastNl < 0 ? '' : buf.subarray(0, lastNl).toString('utf8');
    const items: unknown[] = [];
    let badLines = 0;
    if (complete.length > 0) {
      for (const line of complete.split('\n')) {
        if (line.trim() === '') continue;
        try {
          items.push(JSON.parse(line));
        } catch {
          badLines++;
        }
      }
    }
    return { items, offset: fromOffset + lastNl + 1, badLines, tornTail: lastNl + 1 < buf.length };
  } finally {
    await fh.close();
  }
}

/** Cut a torn last line off (everything after the last newline). Returns the bytes removed. */
export async function repairTornTail(file: string): Promise<number> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return 0;
  }
  if (size === 0) return 0;
  const fh = await open(file, 'r');
  let keep = 0;
  try {
    // Scan backwards in blocks for the last newline.
    const block = 64 * 1024;
    let end = size;
    let found = -1;
    while (end > 0 && found < 0) {
      const start = Math.max(0, end - block);
      const buf = Buffer.alloc(end - start);
      await fh.read(buf, 0, buf.length, start);
      const i = buf.lastIndexOf(0x0a);
      if (i >= 0) found = start + i;
      end = start;
    }
    keep = found + 1;
  } finally {
    await fh.close();
  }
  if (keep === size) return 0;
  await truncate(file, keep);
  return size - keep;
}

/** A single-writer appender: lines are appended as written and fsynced on `flush()`. */
export class JsonlAppender {
  private fh: FileHandle | null = null;
  private dirty = false;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  private async handle(): Promise<FileHandle> {
    if (!this.fh) {
      await repairTornTail(this.file);
      this.fh = await open(this.file, 'a');
    }
    return this.fh;
  }

  /** Append lines (each without a newline). Serialised, so concurrent calls never interleave bytes. */
  append(lines: readonly string[]): Promise<void> {
    if (lines.length === 0) return this.chain.then(() => undefined);
    const data = lines.map((l) => `${l}\n`).join('');
    const p = this.chain.then(async () => {
      const fh = await this.handle();
      if (storeFaults().armed) {
        // Fault tests only: write the batch in two parts with a kill point between, so a kill tears a line.
        const bytes = Buffer.from(data, 'utf8');
        const half = Math.max(1, Math.floor(bytes.length / 2));
        await fh.write(bytes.subarray(0, half));
        storeFaults().at('jsonl-append');
        await fh.write(bytes.subarray(half));
      } else {
        await fh.write(data);
      }
      this.dirty = true;
    });
    this.chain = p.catch(() => undefined);
    return p;
  }

  flush(): Promise<void> {
    const p = this.chain.then(async () => {
      if (this.fh && this.dirty) {
        await this.fh.sync();
        this.dirty = false;
      }
    });
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** fsync and close; the handle is closed even when the fsync fails (never left for the GC to close). */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      const fh = this.fh;
      this.fh = null;
      await fh?.close();
    }
  }
}

/** Byte range of one complete line and the `step` field of its JSON object. */
export interface LineRef {
  readonly step: number;
  readonly start: number;
  readonly length: number;
}

/**
 * Index the complete lines of a JSONL file from `fromOffset`: each line's step and byte range (the parsed
 * object is dropped), so a reader can later fetch only the lines it needs. A torn last line is left out.
 */
export async function indexJsonl(file: string, fromOffset = 0): Promise<{ refs: LineRef[]; offset: number }> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { refs: [], offset: 0 };
    throw e;
  }
  try {
    const { size } = await fh.stat();
    if (size <= fromOffset) return { refs: [], offset: Math.min(fromOffset, size) };
    const buf = Buffer.alloc(size - fromOffset);
    await fh.read(buf, 0, buf.length, fromOffset);
    const refs: LineRef[] = [];
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, pos);
      if (nl < 0) break;
      if (nl > pos) {
        try {
          const step = (JSON.parse(buf.subarray(pos, nl).toString('utf8')) as { step?: unknown }).step;
          if (typeof step === 'number') refs.push({ step, start: fromOffset + pos, length: nl - pos });
        } catch {
          // a damaged line is skipped
        }
      }
      pos = nl + 1;
    }
    return { refs, offset: fromOffset + pos };
  } finally {
    await fh.close();
  }
}

/** Read and parse the given lines of a file. */
export async function readLines(file: string, refs: readonly LineRef[]): Promise<unknown[]> {
  if (refs.length === 0) return [];
  const fh = await open(file, 'r');
  try {
    const out: unknown[] = [];
    for (const r of refs) {
      const buf = Buffer.alloc(r.length);
      await fh.read(buf, 0, r.length, r.start);
      out.push(JSON.parse(buf.toString('utf8')));
    }
    return out;
  } finally {
    await fh.close();
  }
}
