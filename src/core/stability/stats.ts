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

/**
 * Measurement noise of a metric from its own recent history: a robust standard deviation of one step's value,
 * 1.4826 · median |x_t − x_{t−1}| / √2 (MAD of first differences; trends barely move it, a collapse is a few
 * large differences among many small ones). Small laptop batches make success rates very noisy (8 episodes →
 * σ ≈ 0.16 at p = 0.3), so "fell from its best" must be judged against this, not only in absolute terms.
 */
export class NoiseEstimator {
  private diffs: number[] = [];
  private prev: number | null = null;
  constructor(readonly window: number) {}
  push(v: number): void {
    if (this.prev !== null) {
      this.diffs.push(Math.abs(v - this.prev));
      if (this.diffs.length > this.window) this.diffs.shift();
    }
    this.prev = v;
  }
  get samples(): number {
    return this.diffs.length;
  }
  /** σ of a single value (0 until two values were seen). */
  sigma(): number {
    if (this.diffs.length === 0) return 0;
    return (1.4826 * median(this.diffs)) / Math.SQRT2;
  }
}
