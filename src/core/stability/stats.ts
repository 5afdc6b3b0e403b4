/** Small streaming statistics shared by the detector rules. */

/** The last `n` values; mean and median over them. */
export class Window {
  private buf: number[] = [];
  constructor(public n: number) {}
  /** Change the length (a Cadence learnt the stream's logging interval); keeps the newest values. */
  resize(n: number): void {
    this.n = n;
    if (this.buf.length > n) this.buf.splice(0, this.buf.length - n);
  }
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

/** Median (or another summary, e.g. the minimum) of the first `n` finite values seen (the run's own baseline). */
export class Baseline {
  private vals: number[] = [];
  private value: number | null = null;
  constructor(public n: number, private readonly summary: (xs: readonly number[]) => number = median) {}
  /** Change how many first values make the baseline, until it is fixed (then it no longer moves). */
  resize(n: number): void {
    if (this.value !== null) return;
    this.n = n;
    if (this.vals.length >= n) this.value = this.summary(this.vals.slice(0, n));
  }
  push(v: number): void {
    if (this.value !== null) return;
    this.vals.push(v);
    if (this.vals.length >= this.n) this.value = this.summary(this.vals.slice(0, this.n));
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

/**
 * The logging interval of one metric, learnt from its own step numbers, to turn windows given in training steps
 * into a number of logged points. The lab logs every step; TRL / HF Trainer log every `logging_steps` (10 in
 * both real TRL runs of ../shared/data/real-runs) and each logged value is already the mean over those steps,
 * so "3 steps in a row" is one TRL point, not thirty steps. Runs may start at step 101 or have gaps: the
 * interval is the median of the first differences (a gap or a repeated log does not move it), 1 until two
 * points were seen (the lab's case, so lab runs behave exactly as before).
 */
export class Cadence {
  private last: number | null = null;
  private diffs: number[] = [];
  private cached = 1;
  push(step: number): void {
    if (this.last !== null && step > this.last && this.diffs.length < 32) {
      this.diffs.push(step - this.last);
      this.cached = Math.max(1, median(this.diffs));
    }
    this.last = step;
  }
  /** Steps between logged points (≥ 1). */
  get stride(): number {
    return this.cached;
  }
  /** Logged points covering `steps` training steps: at least 1. */
  points(steps: number): number {
    return Math.max(1, Math.round(steps / this.cached));
  }
}
