/**
 * Seeded, serialisable pseudo-random generator for the whole engine.
 *
 * Why: a run must be a function of (config, seed, app version, backend), so nothing in src/core may read
 * Math.random. sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, 128-bit state) is fast in JS,
 * passes PractRand to large sizes, and its state is four uint32 — trivially checkpointed and restored
 * for resume-equivalence.
 */
export interface RngState {
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly d: number;
}

/** Hash a string or number into a 32-bit seed (FNV-1a over UTF-16 code units, then avalanche). */
export function hashSeed(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const s = typeof part === 'number' ? `n${part}` : `s${part}`;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 0x7c;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** Create from a seed (any integer) or, with `fork`, from a parent stream plus a label. */
  constructor(seed: number | RngState) {
    if (typeof seed === 'number') {
      if (!Number.isFinite(seed)) throw new RangeError(`Rng: seed must be a finite number, got ${seed}`);
      this.a = 0x9e3779b9;
      this.b = 0x243f6a88;
      this.c = 0xb7e15162;
      this.d = (Math.floor(seed) >>> 0) ^ hashSeed(Math.floor(seed / 2 ** 32));
      for (let i = 0; i < 15; i++) this.nextUint32();
    } else {
      this.a = seed.a >>> 0;
      this.b = seed.b >>> 0;
      this.c = seed.c >>> 0;
      this.d = seed.d >>> 0;
    }
  }

  /** An independent stream derived from this generator's *seed-time identity* and a label; does not advance this one. */
  static derive(seed: number, ...labels: Array<string | number>): Rng {
    return new Rng(hashSeed(seed, ...labels));
  }

  /** A child stream: advances this generator once and seeds the child from it and the label. */
  fork(label: string | number): Rng {
    return new Rng(hashSeed(this.nextUint32(), label));
  }

  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  float(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!(n > 0) || !Number.isInteger(n)) throw new RangeError(`Rng.int: n must be a positive integer, got ${n}`);
    return Math.floor(this.float() * n);
  }

  /** Uniform integer in [lo, hi] inclusive. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  /** Standard normal via Box–Muller (one value per call; deterministic given the state). */
  normal(): number {
    let u = this.float();
    if (u < 1e-12) u = 1e-12;
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: empty list');
    return items[this.int(items.length)];
  }

  /** Fisher–Yates shuffle in place; returns the same array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i];
      items[i] = items[j];
      items[j] = tmp;
    }
    return items;
  }

  getState(): RngState {
    return { a: this.a, b: this.b, c: this.c, d: this.d };
  }

  setState(state: RngState): void {
    this.a = state.a >>> 0;
    this.b = state.b >>> 0;
    this.c = state.c >>> 0;
    this.d = state.d >>> 0;
  }
}

/** Injected clock: the engine measures wall time only through this (tests pass a fake). */
export interface Clock {
  /** Milliseconds, monotonic within a process. */
  now(): number;
}
