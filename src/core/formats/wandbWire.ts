/**
 * The protobuf wire walk of the `.wandb` records the reader reads most (history and summary: one each per
 * `wandb.log` row, a hundred items apiece), without protobufjs's Reader: a Reader object per record, a
 * subarray and a UTF-8 loop per string, and a fresh key string per item were most of the parser's time. Keys
 * repeat every row, so each distinct key's bytes map to one slot and string (`KeySlots`), and a plain decimal value
 * is read from its bytes without making a string (`decimalAt`, exact where it answers). Field numbers: wandbProto.ts.
 *
 * Checked against protobufjs's own decoding of the same records (wandbWire.test.ts) and on the files W&B's SDK
 * wrote (the tracker tests); a message cut inside a field throws, as protobufjs's Reader does.
 */

/** Thrown on a message that ends inside a field (the record is then counted as undecodable). */
export class WireError extends Error {
  constructor() {
    super('truncated protobuf message');
    this.name = 'WireError';
  }
}

/** A cursor over one message's bytes. */
export class Wire {
  constructor(
    readonly b: Uint8Array,
    public p: number,
    readonly end: number,
  ) {}

  /** A varint as an unsigned 32-bit number (tags, lengths): higher bits of a longer varint are dropped, as protobufjs's uint32 does. */
  varint(): number {
    const b = this.b;
    let p = this.p;
    if (p >= this.end) throw new WireError();
    let c = b[p++];
    if (c < 0x80) {
      this.p = p;
      return c;
    }
    let x = c & 0x7f;
    let shift = 7;
    for (;;) {
      if (p >= this.end) throw new WireError();
      c = b[p++];
      if (shift < 32) x |= (c & 0x7f) << shift;
      shift += 7;
      if (c < 0x80) break;
      if (shift > 70) throw new WireError();
    }
    this.p = p;
    return x >>> 0;
  }

  /** A varint int64 as a number (exact up to 2^53; two's complement for negative values, as protobufjs's int64). */
  int64(): number {
    const b = this.b;
    let p = this.p;
    let lo = 0;
    let hi = 0;
    let shift = 0;
    for (;;) {
      if (p >= this.end) throw new WireError();
      const c = b[p++];
      if (shift < 28) lo |= (c & 0x7f) << shift;
      else if (shift === 28) {
        lo |= (c & 0x0f) << 28;
        hi |= (c & 0x7f) >>> 4;
      } else if (shift < 64) hi |= (c & 0x7f) << (shift - 32);
      shift += 7;
      if (c < 0x80) break;
      if (shift > 70) throw new WireError();
    }
    this.p = p;
    lo >>>= 0;
    if (hi & 0x80000000) {
      // Negative: -(~value + 1) over the 64 bits.
      const nlo = (~lo + 1) >>> 0;
      const nhi = (~hi + (nlo === 0 ? 1 : 0)) >>> 0;
      return -(nhi * 4294967296 + nlo);
    }
    return (hi >>> 0) * 4294967296 + lo;
  }

  /** A length-delimited field's byte range; the cursor moves past it. */
  span(): number {
    const n = this.varint();
    const s = this.p;
    if (s + n > this.end) throw new WireError();
    this.p = s + n;
    return s;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.int64();
        return;
      case 1:
        this.p += 8;
        break;
      case 2: {
        const n = this.varint();
        this.p += n;
        break;
      }
      case 5:
        this.p += 4;
        break;
      case 3:
        // A group: skip fields up to its end tag.
        for (;;) {
          const t = this.varint();
          if ((t & 7) === 4) return;
          this.skip(t & 7);
        }
      default:
        throw new WireError();
    }
    if (this.p > this.end) throw new WireError();
  }
}

const decoder = new TextDecoder('utf-8');

/** UTF-8 bytes → string; ASCII (W&B's keys and JSON values, nearly always) without the decoder's call cost. */
export function utf8At(b: Uint8Array, s: number, e: number): string {
  if (e - s <= 64) {
    let out = '';
    for (let i = s; i < e; i++) {
      const c = b[i];
      if (c >= 0x80) return decoder.decode(b.subarray(s, e));
      out += String.fromCharCode(c);
    }
    return out;
  }
  return decoder.decode(b.subarray(s, e));
}

/** Most distinct keys a KeySlots gives a slot by their bytes; later new keys are decoded each time they come. */
export const KEY_SLOTS_BY_BYTES = 16_384;
/** Keys longer than this (bytes) are decoded each time instead of hashed. */
const KEY_SLOT_MAX_BYTES = 256;

/**
 * Each distinct key as a small integer, its slot, holding the key's string decoded once. A row's keys are the
 * same ~100 every row: the reader keeps a row's values by slot in typed arrays and builds the row's object once,
 * and every later step (the mapping plan's key comparison, the store's encoding) sees strings it already knows.
 *
 * The bytes → slot table is open addressing over an Int32Array (FNV-1a of the bytes, linear probing, checked
 * byte for byte): the Map keyed by the 32-bit hash it replaced boxed half the hashes as heap numbers on every
 * lookup. One slot per distinct string (`ofString` finds it too), so a flat key and the same key joined from
 * nested parts share one.
 *
 * `cap` bounds how many slots `of` / `ofStringIfRoom` make: past it a new key gets no slot (-1, its string in
 * `missed`), so a file whose rows each bring new keys cannot grow the table without bound. The reader keeps a run's
 * first MAX_RUN_KEYS keys (steps.ts) and makes their slots with `ofString`, which is not bounded.
 */
export class KeySlots {
  /** Slot → the key. */
  readonly keys: string[] = [];
  /** The key of the last `of` / `ofStringIfRoom` that answered -1: decoded, given no slot. */
  missed = '';
  private readonly byString = new Map<string, number>();
  /** Hashed byte keys: their bytes, hash and slot, by entry (table cells hold entry + 1; 0 is empty). */
  private readonly entryBytes: Uint8Array[] = [];
  private readonly entryHash: number[] = [];
  private readonly entrySlot: number[] = [];
  private table = new Int32Array(1024);

  constructor(private readonly cap = Number.POSITIVE_INFINITY) {}

  /** The slot of the key `b[s, e)` (UTF-8); -1 for a new key once `cap` slots are made. */
  of(b: Uint8Array, s: number, e: number): number {
    const n = e - s;
    if (n > KEY_SLOT_MAX_BYTES) return this.ofStringIfRoom(utf8At(b, s, e));
    let h = 0x811c9dc5 ^ n;
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], 16777619);
    const table = this.table;
    const mask = table.length - 1;
    for (let c = h & mask; ; c = (c + 1) & mask) {
      const at = table[c];
      if (at === 0) break;
      const entry = at - 1;
      if (this.entryHash[entry] !== h) continue;
      const k = this.entryBytes[entry];
      if (k.length !== n) continue;
      let i = 0;
      while (i < n && k[i] === b[s + i]) i++;
      if (i === n) return this.entrySlot[entry];
    }
    const slot = this.ofStringIfRoom(utf8At(b, s, e));
    if (slot >= 0 && this.entryBytes.length < KEY_SLOTS_BY_BYTES) this.remember(b.slice(s, e), h, slot);
    return slot;
  }

  /** The slot of a key given as a string, -1 when it has none. */
  find(key: string): number {
    return this.byString.get(key) ?? -1;
  }

  /** The slot of a key given as a string; -1 (the key in `missed`) for a new key once `cap` slots are made. */
  ofStringIfRoom(key: string): number {
    const slot = this.byString.get(key);
    if (slot !== undefined) return slot;
    if (this.keys.length >= this.cap) {
      this.missed = key;
      return -1;
    }
    return this.ofString(key);
  }

  /** The slot of a key given as a string, made if new (whatever `cap`). */
  ofString(key: string): number {
    let slot = this.byString.get(key);
    if (slot === undefined) {
      slot = this.keys.length;
      this.keys.push(key);
      this.byString.set(key, slot);
    }
    return slot;
  }

  private remember(bytes: Uint8Array, h: number, slot: number): void {
    const entry = this.entryBytes.length;
    this.entryBytes.push(bytes);
    this.entryHash.push(h);
    this.entrySlot.push(slot);
    // At most half full: grow and place every entry again.
    if (2 * (entry + 1) > this.table.length) {
      this.table = new Int32Array(this.table.length * 2);
      for (let e = 0; e <= entry; e++) this.place(e);
    } else this.place(entry);
  }

  private place(entry: number): void {
    const table = this.table;
    const mask = table.length - 1;
    let c = this.entryHash[entry] & mask;
    while (table[c] !== 0) c = (c + 1) & mask;
    table[c] = entry + 1;
  }
}

const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/**
 * The plain decimal `-?digits[.digits]` in `b[s, e)` as a number, or undefined for anything else (an exponent,
 * NaN, a string, an object: the caller parses the text). Exact: with at most 15 digits the digits form an integer
 * m < 2^53 and 10^k (k ≤ 22) is exact, so m / 10^k is the correctly rounded double — what Number() returns for the
 * same text (Clinger's fast path).
 */
export function decimalAt(b: Uint8Array, s: number, e: number): number | undefined {
  let i = s;
  let neg = false;
  if (b[i] === 45) {
    neg = true;
    i++;
  }
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (; i < e; i++) {
    const c = b[i];
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
      if (frac >= 0) frac++;
    } else if (c === 46 && frac < 0 && digits > 0) frac = 0;
    else return undefined;
  }
  if (digits === 0 || digits > 15 || frac === 0) return undefined;
  const v = frac > 0 ? m / POW10[frac] : m;
  return neg ? -v : v;
}
