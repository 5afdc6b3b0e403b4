/** Small streaming statistics shared by the detector rules. */

/** The last `n` values; mean and median over them. */
export class Window {
  private buf: number[] = [];
  constructor(readonly n: number) {}
  push(v: number): void {
    this.buf.push(v);
    if (this.buf.length > this.n) this.buf.shift();
  }
  get size(): number {
    return this.buf.length;
  }
  get full(): boolean {
    return this.buf.length >= this.n;
  }
  mean(): number {
    let s = 0;
    for (const v of this.buf) s += v;
    return this.buf.length ? s / this.buf.length : NaN;
  }
  median(): number {
    return median(this.buf);
  }
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Median of the first `n` finite values seen (the run's own baseline). */
export class Baseline {
  private vals: number[] = [];
  private value: number | null = null;
  constructor(readonly n: number) {}
  push(v: number): void {
    if (this.value !== null) return;
    this.vals.push(v);
    if (this.vals.length >= this.n) this.value = median(this.vals);
  }
  get(): number | null {
    return this.value;
  }
}

/** Counts consecutive steps a condition held. */
export class Streak {
  count = 0;
  update(cond: boolean): number {
    this.count = cond ? this.count + 1 : 0;
    return this.count;
  }
}

export function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e5)) return v.toExponential(2);
  return Number(v.toPrecision(3)).toString();
}

export function pct(v: number): string {
  return `${Math.round(v * 100)} %`;
}
