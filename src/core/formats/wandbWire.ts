/**
 * The protobuf wire walk of the `.wandb` records the reader reads most (history and summary: one each per
 * `wandb.log` row, a hundred items apiece), without protobufjs's Reader: a Reader object per record, a
 * subarray and a UTF-8 loop per string, and a fresh key string per item were most of the parser's time. Keys
 * repeat every row, so each distinct key's bytes map to one string (`KeyCache`), and a plain decimal value is read
 * from its bytes without making a string (`decimalAt`, exact where it answers). Field numbers: wandbProto.ts.
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

/**
 * One string per distinct key: a row's keys are the same ~100 strings every row, and handing the same string
 * object on lets every later step (the row's object, the mapping plan's key comparison, the store's encoding)
 * see a key it already knows.
 */
export class KeyCache {
  private readonly slots = new Map<number, { bytes: Uint8Array; s: string }>();

  get(b: Uint8Array, s: number, e: number): string {
    const n = e - s;
    if (n > 256) return utf8At(b, s, e);
    let h = 0x811c9dc5 ^ n;
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], 16777619);
    const hit = this.slots.get(h);
    if (hit !== undefined && hit.bytes.length === n) {
      const k = hit.bytes;
      let i = 0;
      while (i < n && k[i] === b[s + i]) i++;
      if (i === n) return hit.s;
    }
    const str = utf8At(b, s, e);
    // A hash collision keeps the first key (the other is decoded each time); the cache stays bounded.
    if (hit === undefined && this.slots.size < 16_384) this.slots.set(h, { bytes: b.slice(s, e), s: str });
    return str;
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
