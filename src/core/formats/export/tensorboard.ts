/**
 * TensorBoard event-file export: the bytes of one `events.out.tfevents.*` file that TensorBoard opens.
 *
 * Layout (what TensorBoard's own EventFileWriter writes): a first Event with `file_version: "brain.Event:2"`,
 * then one Event per step whose Summary holds a `simple_value` per metric — TensorBoard's scalar dashboard and
 * its EventAccumulator read those directly. Each Event is framed as a TFRecord: uint64 length, masked CRC32C
 * of the length, the data, masked CRC32C of the data (src/core/formats/crc32c.ts). `simple_value` is a float32,
 * so values are rounded the way TensorBoard stores them (Math.fround); NaN and ±Infinity are written as such.
 */
import type { MetricRecord } from '../../../shared/metrics';
import { maskedCrc32c } from '../crc32c';
import { EventType } from '../tensorboardProto';
import { CHUNK_BYTES, exportableKeys } from './keys';

export interface TensorboardExportOptions {
  /** Metric keys written (one tag each), in order; default: exportableKeys(records) (needs a re-iterable input). */
  keys?: readonly string[];
  /** Seconds since the epoch of the file_version event (the run's start). */
  startWallTime: number;
  /**
   * Seconds since the epoch of a step's event; default: startWallTime + the record's `perf/wall_s` (seconds since
   * the run started, when logged) else startWallTime.
   */
  wallTime?: (r: MetricRecord) => number;
}

/** The TFRecord frame of one serialized Event. */
export function frameRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length + 4);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, data.length, true);
  dv.setUint32(4, 0, true);
  dv.setUint32(8, maskedCrc32c(out.subarray(0, 8)), true);
  out.set(data, 12);
  dv.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}

/** The event file's bytes in chunks of about CHUNK_BYTES. */
export function* tensorboardChunks(records: Iterable<MetricRecord>, opts: TensorboardExportOptions): Generator<Uint8Array> {
  if (!Number.isFinite(opts.startWallTime)) throw new Error(`startWallTime must be seconds since the epoch, got ${opts.startWallTime}`);
  const keys = opts.keys ?? exportableKeys(records);
  const wallTime =
    opts.wallTime ??
    ((r: MetricRecord) => {
      const w = r.values['perf/wall_s'];
      return opts.startWallTime + (w !== undefined && Number.isFinite(w) ? w : 0);
    });
  let chunk = new Uint8Array(CHUNK_BYTES);
  let used = 0;
  const add = (frame: Uint8Array): Uint8Array | null => {
    let full: Uint8Array | null = null;
    if (used + frame.length > chunk.length && used > 0) {
      full = chunk.subarray(0, used);
      chunk = new Uint8Array(Math.max(CHUNK_BYTES, frame.length));
      used = 0;
    } else if (frame.length > chunk.length) {
      chunk = new Uint8Array(frame.length);
    }
    chunk.set(frame, used);
    used += frame.length;
    return full;
  };

  const first = add(
    frameRecord(EventType.encode(EventType.create({ wallTime: opts.startWallTime, fileVersion: 'brain.Event:2' })).finish()),
  );
  if (first) yield first;
  for (const r of records) {
    if (!Number.isSafeInteger(r.step) || r.step < 0)
      throw new Error(`step ${r.step} cannot be a TensorBoard step: steps must be non-negative integers`);
    const value: { tag: string; simpleValue: number }[] = [];
    for (const k of keys) {
      const v = r.values[k];
      if (v !== undefined) value.push({ tag: k, simpleValue: v });
    }
    if (value.length === 0) continue;
    const data = EventType.encode(EventType.create({ wallTime: wallTime(r), step: r.step, summary: { value } })).finish();
    const full = add(frameRecord(data));
    if (full) yield full;
  }
  if (used > 0) yield chunk.subarray(0, used);
}
