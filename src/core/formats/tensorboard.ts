/**
 * TensorBoard event files (`events.out.tfevents.*`): TFRecord framing around serialized `Event` protos.
 *
 * Framing (TensorFlow's record writer, tensorflow/core/lib/io/record_writer.cc): for every record
 *   uint64 length (little-endian) · uint32 masked CRC32C of those 8 bytes · data · uint32 masked CRC32C of data.
 * Both CRCs of every record are checked. A record whose data CRC fails is skipped ("bad crc") and reading goes
 * on at the next record, since its length was trustworthy. A length whose CRC fails means the framing itself is
 * lost: the reader then slides forward one byte at a time until 12 bytes form a header whose CRC holds again
 * (one "bad crc" per lost stretch; the stretch's size goes into the notes). Bytes left over at `end()` that do
 * not make a whole record are a "torn tail" — a writer killed mid-record, or a file still being written.
 *
 * Scalars come from `simple_value` (tensorboardX, PyTorch's SummaryWriter, the HF Trainer callback) and from
 * rank-0 numeric tensor summaries (tf.summary.scalar in TF 2, tensorboard's own summary ops: the "scalars"
 * plugin). A tag's plugin is named only on its first value (summary.proto: "the FileWriter only keeps a
 * metadata object on the first summary value with a certain tag"), so the plugin is remembered per tag.
 * Text, histogram, image, audio and other plugins' summaries are not metrics: they are counted in the notes,
 * not in `skipped`. The HF Trainer's `args` / `model_config` text summaries hold JSON and become `meta.config`.
 *
 * Reorder policy. Events for several tags at one step merge into one SourceStep. Writers usually finish a step
 * before starting the next, but some interleave (two loggers on one file, an eval callback logging step N after
 * step N+1 began). So the last `reorderWindow` distinct steps (default 16) stay open: a value for any of them
 * joins its step, and a step is emitted, smallest first, once more than `reorderWindow` newer steps are open,
 * or at `end()` / `flushPending()`. A value for a step older than every open step cannot be placed in order
 * (a restarted writer counting from 0 again, or interleaving wider than the window): the open steps are
 * emitted, and a new pass begins at that step; such a step can therefore reach the sink twice, and main
 * decides what a repeated step means (as for the text formats). Each new pass is counted in the notes.
 * A live follower calls `flushPending()` when the file has been idle, so the last steps do not wait for
 * `reorderWindow` more steps.
 */
import { maskedCrc32cRange } from './crc32c';
import { bump, MAX_RECORD_KEYS } from './steps';
import {
  DT,
  int64ToNumber,
  Reader,
  SessionLogType,
  SummaryMetadataType,
  TensorType,
  utf8,
  type Int64,
  type MetadataMsg,
  type TensorMsg,
} from './tensorboardProto';
import type { ByteParser, SourceMeta, SourceStep, StepSink } from './types';

export interface TensorboardParserOptions {
  /** How many distinct open steps a value may still join (see the reorder policy above). */
  reorderWindow?: number;
}

export interface TensorboardParser extends ByteParser {
  /** Emits every open step now (in step order); later values for them start a new pass. */
  flushPending(): void;
  /** Scalars read so far (values, not steps). */
  readonly scalars: number;
  /** Records read with both CRCs intact. */
  readonly records: number;
}

/** A record's header: the 8-byte length and its 4-byte masked CRC. */
const HEADER = 12;
/** The 4-byte masked CRC after a record's data. */
const FOOTER = 4;
/** A record longer than this (256 MiB) is taken as a corrupt length even if its CRC holds by chance. */
const MAX_RECORD = 256 * 1024 * 1024;
const EMPTY = new Uint8Array(0);

interface OpenStep {
  step: number;
  values: Record<string, number>;
  wallTime: number;
}

/** Non-metric summaries by kind, for the notes. */
type IgnoredKind = string;
type ProtoReader = InstanceType<typeof Reader>;

export function createTensorboardParser(onStep: StepSink, opts: TensorboardParserOptions = {}): TensorboardParser {
  const window = opts.reorderWindow ?? 16;
  if (!Number.isInteger(window) || window < 1) throw new Error(`reorderWindow must be a positive integer, got ${window}`);

  const skipped: Record<string, number> = {};
  const meta: SourceMeta = { framework: 'unknown', notes: [] };
  const ignored: Record<IgnoredKind, number> = {};
  const tagPlugin = new Map<string, string>();
  const config: Record<string, unknown> = {};

  // Bytes of an unfinished record carried to the next push (or the start of a lost stretch while resyncing).
  let carry: Uint8Array = EMPTY;
  let carryLen = 0;
  let resyncing = false;
  let resyncBytes = 0;
  let records = 0;
  let scalars = 0;
  let fileVersion: string | null = null;
  let firstRecord = true;
  let passes = 1;
  let sessionStarts = 0;
  let ended = false;

  // Open steps in ascending step order; `floor` is the largest step emitted in the current pass.
  const open: OpenStep[] = [];
  let floor = Number.NEGATIVE_INFINITY;

  const emit = (s: OpenStep): void => {
    floor = s.step;
    const out: SourceStep = Number.isFinite(s.wallTime)
      ? { run: '', step: s.step, values: s.values, wallTime: s.wallTime }
      : { run: '', step: s.step, values: s.values };
    onStep(out);
  };

  const flushPending = (): void => {
    for (const s of open) emit(s);
    open.length = 0;
  };

  /** The open step for `step`, creating it (and emitting what the window pushes out) when needed. */
  const stepFor = (step: number, wallTime: number): OpenStep => {
    const last = open.length > 0 ? open[open.length - 1] : undefined;
    if (last !== undefined && last.step === step) return last;
    if (last === undefined || step > last.step) {
      if (step <= floor) {
        // Everything open was already emitted in order; this step is behind them all: a new pass.
        passes++;
        floor = Number.NEGATIVE_INFINITY;
      }
      const s: OpenStep = { step, values: {}, wallTime };
      open.push(s);
      if (open.length > window) emit(open.shift() as OpenStep);
      return s;
    }
    // step < last.step: find it among the open steps or its place between them (the window is small).
    let i = open.length - 1;
    while (i >= 0 && open[i].step > step) i--;
    if (i >= 0 && open[i].step === step) return open[i];
    if (i < 0 && step <= floor) {
      // Older than everything open and than what this pass already emitted: start a new pass.
      flushPending();
      passes++;
      floor = Number.NEGATIVE_INFINITY;
      const s: OpenStep = { step, values: {}, wallTime };
      open.push(s);
      return s;
    }
    const s: OpenStep = { step, values: {}, wallTime };
    open.splice(i + 1, 0, s);
    if (open.length > window) emit(open.shift() as OpenStep);
    return s;
  };

  const seenTags = new Set<string>();
  const addScalar = (tag: string, step: number, wallTime: number, value: number): void => {
    // A run of more tags than any real one logs (100k tags in 4.5 MB took 895 MB): tags past the limit are left out.
    if (!seenTags.has(tag)) {
      if (seenTags.size >= MAX_RECORD_KEYS) {
        bump(skipped, `value of a tag past the first ${MAX_RECORD_KEYS} tags`);
        return;
      }
      seenTags.add(tag);
    }
    const s = stepFor(step, wallTime);
    s.values[tag] = value;
    if (wallTime > s.wallTime || !Number.isFinite(s.wallTime)) s.wallTime = wallTime;
    scalars++;
  };

  const readText = (tag: string, t: TensorMsg): void => {
    // The HF Trainer's TensorBoardCallback writes its TrainingArguments and the model config as JSON text.
    const m = /^(args|model_config)\/text_summary$/.exec(tag);
    if (m === null || t.stringVal.length !== 1) return;
    const bytes = t.stringVal[0];
    try {
      const v: unknown = JSON.parse(utf8.read(bytes, 0, bytes.length));
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        config[m[1]] = v;
        meta.config = config;
        if (m[1] === 'args') meta.framework = 'trl';
      }
    } catch {
      // Not JSON: an ordinary text summary, already counted as text.
    }
  };

  // One record's scalars are staged here and committed only once the whole record decoded.
  const stagedTags: string[] = [];
  const stagedValues: number[] = [];
  let staged = 0;
  const tags = new TagStrings();

  /** Reads one Summary.Value ending at `end`; scalars go to the stage, other kinds to the notes. */
  const readValue = (r: ProtoReader, end: number): void => {
    let tag = '';
    let kind = 0;
    let simple = 0;
    let tensor: Uint8Array | null = null;
    let pluginNow = '';
    while (r.pos < end) {
      const t = r.uint32();
      const f = t >>> 3;
      const w = t & 7;
      if (f === 1 && w === 2) {
        const n = r.uint32();
        if (r.pos + n > end) throw new RangeError('Summary.Value.tag runs past its value');
        tag = tags.get(r.buf, r.pos, r.pos + n);
        r.pos += n;
      } else if (f === 2 && w === 5) {
        simple = r.float();
        kind = 2;
      } else if (f === 8 && w === 2) {
        tensor = r.bytes();
        kind = 8;
      } else if (f === 9 && w === 2) {
        const md = SummaryMetadataType.decode(r.bytes()) as unknown as MetadataMsg;
        pluginNow = md.pluginData?.pluginName ?? '';
      } else {
        if (f >= 3 && f <= 6) kind = f;
        r.skipType(w);
      }
    }
    if (pluginNow !== '') tagPlugin.set(tag, pluginNow);
    const plugin = tagPlugin.get(tag) ?? '';
    switch (kind) {
      case 2:
        stagedTags[staged] = tag;
        stagedValues[staged++] = simple;
        return;
      case 8: {
        const t = TensorType.decode(tensor as Uint8Array) as unknown as TensorMsg;
        if (plugin === '' || plugin === 'scalars') {
          const x = scalarOf(t);
          if (x !== undefined) {
            stagedTags[staged] = tag;
            stagedValues[staged++] = x;
            return;
          }
        }
        if (plugin === 'text' || t.dtype === DT.STRING) {
          bump(ignored, 'text');
          readText(tag, t);
          return;
        }
        bump(ignored, plugin === '' ? 'non-scalar tensor' : plugin);
        return;
      }
      case 3:
      case 5:
        bump(ignored, 'histogram');
        return;
      case 4:
        bump(ignored, 'image');
        return;
      case 6:
        bump(ignored, 'audio');
        return;
      default:
        bump(ignored, plugin === '' ? 'empty value' : plugin);
    }
  };

  /**
   * Decodes one Event. The hot path (wall_time, step, summary values) walks the wire format with protobufjs's
   * Reader instead of materialising message objects: measured, the descriptor's generated decoder alone cost
   * more than the whole 2M-scalars/s budget. Tensors, plugin metadata and SessionLog still decode through the
   * descriptor types.
   */
  const readRecord = (data: Uint8Array): void => {
    staged = 0;
    let wallTime = 0;
    let step = 0;
    let what = 0;
    let version = '';
    let sessionStatus = 0;
    try {
      const r = Reader.create(data);
      let sumStart = -1;
      let sumEnd = -1;
      while (r.pos < r.len) {
        const t = r.uint32();
        const f = t >>> 3;
        const w = t & 7;
        if (f === 1 && w === 1) wallTime = r.double();
        else if (f === 2 && w === 0) step = int64ToNumber(r.int64() as unknown as Int64);
        else if (f === 3 && w === 2) {
          version = r.string();
          what = 3;
        } else if (f === 5 && w === 2) {
          const n = r.uint32();
          sumStart = r.pos;
          sumEnd = r.pos + n;
          r.skip(n);
          what = 5;
        } else if (f === 7 && w === 2) {
          sessionStatus = (SessionLogType.decode(r.bytes()) as unknown as { status: number }).status;
          what = 7;
        } else {
          if (f >= 4 && f <= 9) what = f;
          r.skipType(w);
        }
      }
      if (what === 5) {
        r.pos = sumStart;
        r.len = sumEnd;
        while (r.pos < sumEnd) {
          const t = r.uint32();
          if (t === ((1 << 3) | 2)) {
            const n = r.uint32();
            const end = r.pos + n;
            if (end > sumEnd) throw new RangeError('Summary.Value runs past its Summary');
            readValue(r, end);
            r.pos = end;
          } else {
            r.skipType(t & 7);
          }
        }
      }
    } catch {
      bump(skipped, 'undecodable record');
      return;
    }
    records++;
    if (firstRecord) {
      firstRecord = false;
      if (what === 3) fileVersion = version;
    }
    // int64 steps: 2^64 - 1 reads as -1, and past 2^53 a number is no longer exact. The text formats refuse both.
    if (staged > 0 && (step < 0 || !Number.isSafeInteger(step))) {
      bump(skipped, 'record whose step is negative or past 2^53');
      return;
    }
    for (let i = 0; i < staged; i++) addScalar(stagedTags[i], step, wallTime, stagedValues[i]);
    if (what === 7 && sessionStatus === 1 /* START */ && scalars > 0) sessionStarts++;
  };

  /**
   * The common record, read without a protobufjs Reader: `wall_time` (field 1, fixed64), `step` (field 2, a
   * varint under 2^49) and a `summary` (field 5) whose every value is only a tag (field 1) and a simple_value
   * (field 2, fixed32) — what PyTorch's SummaryWriter, tensorboardX and TensorBoard's EventFileWriter write for
   * each scalar, millions of times per file. Returns false, having changed nothing but the stage, for anything
   * else (metadata, tensors, other fields, bytes that do not parse): readRecord then reads the record.
   * `dv` views the same bytes as `buf`; `start`/`end` bound the record's data. Measured on the bench file
   * (1M scalars, one Event each): the Reader, its Long step and a subarray per record were most of the parse.
   */
  const readSimpleRecord = (buf: Uint8Array, dv: DataView, start: number, end: number): boolean => {
    let p = start;
    let wallTime = 0;
    let step = 0;
    let n = 0;
    let summary = false;
    while (p < end) {
      const key = buf[p++];
      if (key === 0x09 && p + 8 <= end) {
        wallTime = dv.getFloat64(p, true);
        p += 8;
      } else if (key === 0x10) {
        // A varint of up to 7 bytes (< 2^49): exact as a double; longer ones (and negative steps) go the slow way.
        let v = 0;
        let mul = 1;
        let i = 0;
        for (;;) {
          if (p >= end || i === 7) return false;
          const b = buf[p++];
          v += (b & 0x7f) * mul;
          mul *= 128;
          i++;
          if (b < 0x80) break;
        }
        step = v;
      } else if (key === 0x2a && !summary) {
        summary = true;
        const len = smallVarint(buf, p, end);
        if (len < 0 || varintEnd + len > end) return false;
        p = varintEnd;
        const sumEnd = p + len;
        while (p < sumEnd) {
          if (buf[p++] !== 0x0a) return false;
          const vlen = smallVarint(buf, p, sumEnd);
          if (vlen < 0 || varintEnd + vlen > sumEnd) return false;
          p = varintEnd;
          const vEnd = p + vlen;
          let tag: string | null = null;
          let value = 0;
          let hasValue = false;
          while (p < vEnd) {
            const vk = buf[p++];
            if (vk === 0x0a && tag === null) {
              const tlen = smallVarint(buf, p, vEnd);
              if (tlen < 0 || varintEnd + tlen > vEnd) return false;
              tag = tags.get(buf, varintEnd, varintEnd + tlen);
              p = varintEnd + tlen;
            } else if (vk === 0x15 && !hasValue && p + 4 <= vEnd) {
              value = dv.getFloat32(p, true);
              hasValue = true;
              p += 4;
            } else return false;
          }
          // A plugin named for the tag does not matter here: readValue takes a simple_value whatever the plugin.
          if (tag === null || !hasValue) return false;
          stagedTags[n] = tag;
          stagedValues[n++] = value;
        }
      } else return false;
    }
    if (!summary) return false;
    records++;
    firstRecord = false;
    for (let i = 0; i < n; i++) addScalar(stagedTags[i], step, wallTime, stagedValues[i]);
    return true;
  };

  /** Reads the whole records in `buf` from `off`; returns where the unread rest begins. */
  const scan = (buf: Uint8Array, off: number): number => {
    const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const n = buf.length;
    while (n - off >= HEADER) {
      const lo = dv.getUint32(off, true);
      const hi = dv.getUint32(off + 4, true);
      const lenOk = hi === 0 && lo <= MAX_RECORD && maskedCrc32cRange(buf, off, off + 8) === dv.getUint32(off + 8, true);
      if (!lenOk) {
        if (!resyncing) {
          resyncing = true;
          bump(skipped, 'bad crc');
        }
        resyncBytes++;
        off++;
        continue;
      }
      const end = off + HEADER + lo + FOOTER;
      if (end > n) return off;
      resyncing = false;
      if (maskedCrc32cRange(buf, off + HEADER, off + HEADER + lo) !== dv.getUint32(off + HEADER + lo, true)) bump(skipped, 'bad crc');
      else if (!readSimpleRecord(buf, dv, off + HEADER, off + HEADER + lo)) readRecord(buf.subarray(off + HEADER, off + HEADER + lo));
      off = end;
    }
    return off;
  };

  /** Keeps the unread rest of `buf` from `rest`: a started record gets a buffer of its full size at once. */
  const keep = (buf: Uint8Array, rest: number): void => {
    carryLen = buf.length - rest;
    if (carryLen === 0) {
      carry = EMPTY;
    } else if (carryLen >= HEADER && !resyncing) {
      const lo = new DataView(buf.buffer, buf.byteOffset + rest, HEADER).getUint32(0, true);
      carry = new Uint8Array(HEADER + lo + FOOTER);
      carry.set(buf.subarray(rest));
    } else {
      carry = new Uint8Array(carryLen);
      carry.set(buf.subarray(rest));
    }
  };

  const push = (chunk: Uint8Array): void => {
    if (ended) throw new Error('tensorboard parser: push() after end()');
    if (chunk.length === 0) return;
    // A Node Buffer's subarray builds a Buffer (slow) and makes protobufjs pick its Buffer reader: read a
    // plain Uint8Array view of the same bytes instead.
    let buf =
      Object.getPrototypeOf(chunk) === Uint8Array.prototype ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    chunk = buf;
    let start = 0;
    if (carryLen > 0) {
      if (carryLen >= HEADER && !resyncing) {
        // A record whose header was read: fill its buffer, read it, then read the rest of the chunk in place.
        const take = Math.min(carry.length - carryLen, chunk.length);
        carry.set(chunk.subarray(0, take), carryLen);
        carryLen += take;
        if (carryLen < carry.length) return;
        scan(carry, 0);
        start = take;
      } else {
        buf = join(carry.subarray(0, carryLen), chunk);
      }
    }
    keep(buf, scan(buf, start));
  };

  const end = (): void => {
    if (ended) return;
    ended = true;
    if (carryLen > 0 && !resyncing) bump(skipped, 'torn tail');
    else if (carryLen > 0) resyncBytes += carryLen;
    carry = EMPTY;
    carryLen = 0;
    flushPending();
    if (fileVersion === null)
      meta.notes.push('the first record is not a file_version event (not written by a TensorFlow/TensorBoard writer?)');
    else meta.notes.push(`file version ${fileVersion}`);
    meta.notes.push(`${records} records, ${scalars} scalars`);
    const kinds = Object.entries(ignored).map(([k, c]) => `${k} ${c}`);
    if (kinds.length > 0) meta.notes.push(`non-scalar summaries ignored: ${kinds.join(', ')}`);
    if (resyncBytes > 0) meta.notes.push(`${resyncBytes} bytes skipped where the record framing was lost`);
    if (passes > 1)
      meta.notes.push(
        `steps went back ${passes - 1} time(s) beyond the reorder window (a restarted writer?): those steps were emitted again in a new pass`,
      );
    if (sessionStarts > 0) meta.notes.push(`${sessionStarts} SessionLog START event(s) after scalars (the writer restarted)`);
  };

  return {
    format: 'tensorboard',
    push,
    end,
    flushPending,
    skipped,
    meta,
    get scalars() {
      return scalars;
    },
    get records() {
      return records;
    },
  };
}

/**
 * Tag names, decoded once per distinct byte sequence. A file repeats a handful of tags millions of times; a
 * fresh string per value costs a UTF-8 decode and, as a property key, a hash and an internalisation each time.
 */
class TagStrings {
  private readonly byHash = new Map<number, { bytes: Uint8Array; str: string }[]>();

  get(buf: Uint8Array, start: number, end: number): string {
    // FNV-1a over the tag's bytes.
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], 0x01000193);
    const bucket = this.byHash.get(h);
    if (bucket !== undefined) {
      for (const e of bucket) if (sameBytes(e.bytes, buf, start, end)) return e.str;
    }
    const bytes = buf.slice(start, end);
    const str = utf8.read(bytes, 0, bytes.length);
    if (bucket === undefined) this.byHash.set(h, [{ bytes, str }]);
    else bucket.push({ bytes, str });
    return str;
  }
}

/** Where the last smallVarint ended (a module variable, so reading a length allocates nothing). */
let varintEnd = 0;

/** A varint of at most 4 bytes (lengths under 256 MiB) at `p`, its end in `varintEnd`; -1 when it is not one. */
function smallVarint(buf: Uint8Array, p: number, end: number): number {
  let v = 0;
  for (let i = 0, shift = 0; i < 4; i++, shift += 7) {
    if (p >= end) return -1;
    const b = buf[p++];
    v |= (b & 0x7f) << shift;
    if (b < 0x80) {
      varintEnd = p;
      return v >>> 0;
    }
  }
  return -1;
}

function sameBytes(a: Uint8Array, buf: Uint8Array, start: number, end: number): boolean {
  if (a.length !== end - start) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== buf[start + i]) return false;
  return true;
}

function join(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** The value of a rank-0 numeric tensor, or undefined when `t` is not one. */
function scalarOf(t: TensorMsg): number | undefined {
  const shape = t.tensorShape;
  if (shape && (shape.unknownRank || shape.dim.length > 0)) return undefined;
  const c = t.tensorContent;
  if (c !== undefined && c.length > 0) {
    // Tensor::AsProtoTensorContent: the raw little-endian element bytes (what TF 2's C++ writer stores).
    const dv = new DataView(c.buffer, c.byteOffset, c.byteLength);
    const need = (bytes: number): boolean => c.length === bytes;
    switch (t.dtype) {
      case DT.FLOAT:
        return need(4) ? dv.getFloat32(0, true) : undefined;
      case DT.DOUBLE:
        return need(8) ? dv.getFloat64(0, true) : undefined;
      case DT.INT32:
        return need(4) ? dv.getInt32(0, true) : undefined;
      case DT.UINT32:
        return need(4) ? dv.getUint32(0, true) : undefined;
      case DT.INT64:
        return need(8) ? Number(dv.getBigInt64(0, true)) : undefined;
      case DT.UINT64:
        return need(8) ? Number(dv.getBigUint64(0, true)) : undefined;
      case DT.INT16:
        return need(2) ? dv.getInt16(0, true) : undefined;
      case DT.UINT16:
        return need(2) ? dv.getUint16(0, true) : undefined;
      case DT.INT8:
        return need(1) ? dv.getInt8(0) : undefined;
      case DT.UINT8:
        return need(1) ? dv.getUint8(0) : undefined;
      case DT.BOOL:
        return need(1) ? (dv.getUint8(0) !== 0 ? 1 : 0) : undefined;
      case DT.HALF:
        return need(2) ? halfToNumber(dv.getUint16(0, true)) : undefined;
      case DT.BFLOAT16:
        return need(2) ? bfloat16ToNumber(dv.getUint16(0, true)) : undefined;
      default:
        return undefined;
    }
  }
  // The typed repeated fields (tensor_util.make_tensor_proto, and the HF / PyTorch writers).
  switch (t.dtype) {
    case DT.FLOAT:
      return one(t.floatVal);
    case DT.DOUBLE:
      return one(t.doubleVal);
    case DT.INT32:
    case DT.INT16:
    case DT.INT8:
    case DT.UINT8:
    case DT.UINT16:
      return one(t.intVal);
    case DT.UINT32:
      return one(t.uint32Val);
    case DT.INT64: {
      const v = one(t.int64Val);
      return v === undefined ? undefined : int64ToNumber(v);
    }
    case DT.UINT64: {
      const v = one(t.uint64Val);
      return v === undefined ? undefined : int64ToNumber(v);
    }
    case DT.BOOL: {
      const v = one(t.boolVal);
      return v === undefined ? undefined : v ? 1 : 0;
    }
    case DT.HALF: {
      const v = one(t.halfVal);
      return v === undefined ? undefined : halfToNumber(v & 0xffff);
    }
    case DT.BFLOAT16: {
      const v = one(t.halfVal);
      return v === undefined ? undefined : bfloat16ToNumber(v & 0xffff);
    }
    default:
      return undefined;
  }
}

function one<T>(xs: readonly T[] | undefined): T | undefined {
  return xs !== undefined && xs.length === 1 ? xs[0] : undefined;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE 754 binary16 bits → number (exact: every half is a double). */
export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** bfloat16 bits (the top half of a float32) → number. */
function bfloat16ToNumber(b: number): number {
  u32[0] = b << 16;
  return f32[0];
}
