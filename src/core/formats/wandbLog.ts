/**
 * The framing of W&B's `.wandb` transaction log (the file every W&B run, online or offline, writes beside its
 * code: `wandb/run-<date>-<id>/run-<id>.wandb`): a 7-byte file header, then LevelDB's log format.
 *
 * Facts from wandb's datastore (the Python SDK's `wandb/sdk/internal/datastore.py` before wandb-core took it over,
 * and wandb-core's `leveldb` writer, which writes the same bytes):
 * - header: the 4 bytes `:W&B`, the magic 0xBEE1 (uint16, little-endian), the version 0 (one byte);
 * - LevelDB log: 32 KiB blocks; each record chunk has a 7-byte header — CRC-32 (zlib's polynomial; uint32 LE) of
 *   the type byte followed by the payload, the payload length (uint16 LE), the type (1 FULL, 2 FIRST, 3 MIDDLE,
 *   4 LAST) — then the payload. A chunk never crosses a block boundary; fewer than 7 bytes left in a block are
 *   zero padding. The file header sits at the start of the first block, so its first chunk starts at offset 7.
 * - each reassembled payload is one protobuf `wandb_internal.Record` (wandbProto.ts).
 *
 * Pure: bytes in, payloads out, no files. A chunk whose CRC does not match, or whose length runs past its block,
 * is counted and the rest of its block skipped (as LevelDB's reader does: nothing after a bad chunk in the same
 * block can be trusted); a torn last record (a writer killed mid-write, or a file still growing) is counted at
 * `end()` only.
 */
import CRC32 from 'crc-32';

export const WANDB_BLOCK = 32 * 1024;
export const WANDB_HEADER = new Uint8Array([0x3a, 0x57, 0x26, 0x42, 0xe1, 0xbe, 0x00]);
const CHUNK_HEADER = 7;
export const enum ChunkType {
  Full = 1,
  First = 2,
  Middle = 3,
  Last = 4,
}

export const SKIP_BAD_CRC = 'W&B record with a bad CRC (rest of its 32 KiB block skipped)';
export const SKIP_BAD_LENGTH = 'W&B record longer than its block (rest of the block skipped)';
export const SKIP_ORPHAN = 'W&B record fragment without its first part';
export const SKIP_TORN = 'torn W&B record at the end of the file';
export const SKIP_BAD_HEADER = 'file without the 7-byte ":W&B" header (magic 0xBEE1, version 0)';

/** CRC-32 seeds: the CRC of the type byte alone, continued over the payload. */
const TYPE_SEED = [0, 1, 2, 3, 4].map((t) => CRC32.buf(new Uint8Array([t])) >>> 0);

/**
 * zlib's CRC-32 of `data` continued from `seed` (the CRC of what came before), as an unsigned or signed 32-bit
 * number: the crc-32 package's `buf` by default; main hands in node:zlib's native `crc32`, which gives the same
 * value (checked in wandbLog.test.ts) for about a tenth of the time (crc-32 was ~0.1 CPU s per 100 MB).
 */
export type Crc32 = (data: Uint8Array, seed: number) => number;

const crc32Js: Crc32 = (data, seed) => CRC32.buf(data, seed);

/** True when `head` starts with the `.wandb` file header. */
export function isWandbLog(head: Uint8Array): boolean {
  if (head.length < WANDB_HEADER.length) return false;
  for (let i = 0; i < WANDB_HEADER.length; i++) if (head[i] !== WANDB_HEADER[i]) return false;
  return true;
}

/**
 * Incremental reader: `push` any chunks of one file in order; `onRecord` gets each complete payload. Counts
 * skips by reason into `skipped`.
 */
export class WandbLogReader {
  private buf: Uint8Array = new Uint8Array(0);
  /** Valid bytes in buf. */
  private len = 0;
  /** Whether buf is this reader's own (it may then be written into). */
  private owned = false;
  /** File offset of buf[0]. */
  private base = 0;
  /** Offset inside buf of the next unread byte. */
  private off = 0;
  private headerDone = false;
  private bad = false;
  private parts: Uint8Array[] | null = null;
  private partsLen = 0;
  /** Bytes taken from the file so far. */
  bytes = 0;

  constructor(
    private readonly onRecord: (payload: Uint8Array) => void,
    readonly skipped: Record<string, number>,
    private readonly crc32: Crc32 = crc32Js,
  ) {}

  private bump(reason: string): void {
    this.skipped[reason] = (this.skipped[reason] ?? 0) + 1;
  }

  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.bad) return;
    const rest = this.len - this.off;
    if (rest === 0 && chunk.length >= 4096) {
      // Nothing pending: read the caller's chunk in place (the usual case with 1 MB reads).
      this.base += this.len;
      this.buf = chunk;
      this.len = chunk.length;
      this.owned = false;
    } else {
      // Append into a buffer of our own, compacting the consumed prefix and growing by doubling, so small
      // pushes (a followed file's appends) cost linear time overall.
      if (!this.owned || rest + chunk.length > this.buf.length) {
        const next = new Uint8Array(Math.max(64 * 1024, 2 * (rest + chunk.length)));
        next.set(this.buf.subarray(this.off, this.len), 0);
        this.buf = next;
        this.owned = true;
      } else if (this.off > 0) this.buf.copyWithin(0, this.off, this.len);
      this.base += this.off;
      this.buf.set(chunk, rest);
      this.len = rest + chunk.length;
    }
    this.off = 0;
    this.drain();
  }

  private skipToBlockEnd(pos: number): number {
    return (Math.floor(pos / WANDB_BLOCK) + 1) * WANDB_BLOCK;
  }

  private drain(): void {
    const b = this.buf;
    const n = this.len;
    let i = this.off;
    if (!this.headerDone) {
      if (n - i < CHUNK_HEADER) return;
      if (!isWandbLog(b.subarray(i, i + CHUNK_HEADER))) {
        this.bad = true;
        this.bump(SKIP_BAD_HEADER);
        return;
      }
      i += CHUNK_HEADER;
      this.headerDone = true;
    }
    for (;;) {
      const pos = this.base + i;
      const left = WANDB_BLOCK - (pos % WANDB_BLOCK);
      if (left < CHUNK_HEADER) {
        if (n - i < left) break;
        i += left;
        continue;
      }
      if (n - i < CHUNK_HEADER) break;
      const crc = (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
      const len = b[i + 4] | (b[i + 5] << 8);
      const type = b[i + 6];
      if (crc === 0 && len === 0 && type === 0) {
        // Zeroed space (a preallocated or padded block): nothing more in this block.
        const to = this.skipToBlockEnd(pos) - this.base;
        if (to > n) break;
        i = to;
        continue;
      }
      if (CHUNK_HEADER + len > left || type < ChunkType.Full || type > ChunkType.Last) {
        const to = this.skipToBlockEnd(pos) - this.base;
        if (to > n) break; // wait: the block may still be torn only because it is not all here yet
        this.bump(SKIP_BAD_LENGTH);
        this.parts = null;
        i = to;
        continue;
      }
      const end = i + CHUNK_HEADER + len;
      if (end > n) break;
      const payload = b.subarray(i + CHUNK_HEADER, end);
      if (this.crc32(payload, TYPE_SEED[type]) >>> 0 !== crc) {
        const to = this.skipToBlockEnd(pos) - this.base;
        if (to > n) break;
        this.bump(SKIP_BAD_CRC);
        this.parts = null;
        i = to;
        continue;
      }
      i = end;
      this.chunk(type, payload);
    }
    this.off = i;
  }

  private chunk(type: number, payload: Uint8Array): void {
    if (type === ChunkType.Full) {
      if (this.parts) this.bump(SKIP_ORPHAN);
      this.parts = null;
      this.onRecord(payload);
      return;
    }
    if (type === ChunkType.First) {
      if (this.parts) this.bump(SKIP_ORPHAN);
      // Copy: the buffer is replaced on the next push.
      this.parts = [payload.slice()];
      this.partsLen = payload.length;
      return;
    }
    if (!this.parts) {
      this.bump(SKIP_ORPHAN);
      return;
    }
    this.parts.push(payload.slice());
    this.partsLen += payload.length;
    if (type === ChunkType.Last) {
      const whole = new Uint8Array(this.partsLen);
      let o = 0;
      for (const p of this.parts) {
        whole.set(p, o);
        o += p.length;
      }
      this.parts = null;
      this.onRecord(whole);
    }
  }

  /** Whether the bytes so far end exactly at a record boundary (nothing torn waiting). */
  get clean(): boolean {
    return this.parts === null && this.len - this.off === 0;
  }

  /** The file ended: a partial record left over is a torn tail. */
  end(): void {
    if (this.bad) return;
    if (!this.headerDone && this.len - this.off > 0) {
      this.bump(SKIP_BAD_HEADER);
      return;
    }
    // Trailing zero padding of the last block is not a torn record.
    const rest = this.buf.subarray(this.off, this.len);
    const torn = this.parts !== null || rest.some((x) => x !== 0);
    if (torn) this.bump(SKIP_TORN);
    this.parts = null;
    this.base += this.len;
    this.buf = new Uint8Array(0);
    this.len = 0;
    this.off = 0;
    this.owned = false;
  }
}

/**
 * The writer's side: frames payloads into a `.wandb` file's bytes (header first). `take()` returns the bytes
 * framed since the last call, so an exporter can stream a long run.
 */
export class WandbLogWriter {
  private out: Uint8Array[] = [];
  private pos = 0;

  constructor() {
    this.emit(WANDB_HEADER);
  }

  private emit(b: Uint8Array): void {
    this.out.push(b);
    this.pos += b.length;
  }

  write(payload: Uint8Array): void {
    let from = 0;
    let first = true;
    for (;;) {
      let left = WANDB_BLOCK - (this.pos % WANDB_BLOCK);
      if (left < CHUNK_HEADER) {
        this.emit(new Uint8Array(left));
        left = WANDB_BLOCK;
      }
      const room = left - CHUNK_HEADER;
      const n = Math.min(room, payload.length - from);
      const last = from + n === payload.length;
      const type = first && last ? ChunkType.Full : first ? ChunkType.First : last ? ChunkType.Last : ChunkType.Middle;
      const part = payload.subarray(from, from + n);
      const h = new Uint8Array(CHUNK_HEADER);
      const crc = CRC32.buf(part, TYPE_SEED[type]) >>> 0;
      h[0] = crc & 0xff;
      h[1] = (crc >>> 8) & 0xff;
      h[2] = (crc >>> 16) & 0xff;
      h[3] = crc >>> 24;
      h[4] = n & 0xff;
      h[5] = n >>> 8;
      h[6] = type;
      this.emit(h);
      this.emit(part.slice());
      from += n;
      first = false;
      if (last) return;
    }
  }

  /** The bytes framed since the last take. */
  take(): Uint8Array {
    let n = 0;
    for (const p of this.out) n += p.length;
    const all = new Uint8Array(n);
    let o = 0;
    for (const p of this.out) {
      all.set(p, o);
      o += p.length;
    }
    this.out = [];
    return all;
  }
}
