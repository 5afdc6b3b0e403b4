/** Small streaming statistics shared by the detector rules. */

/** A logged point of one metric: the value a message may quote, at the step it names. */
export interface Pt {
  readonly step: number;
  readonly value: number;
}

/**
 * Values kept in the order `median` sorts them (`(a, b) => a - b`, a stable sort: equal values in the order they
 * came), updated by one binary search per value added or removed instead of a copy and a sort per median. No NaN
 * (that comparator leaves it unordered): Window keeps none here.
 */
class SortedValues {
  private readonly s: number[] = [];

  add(v: number): void {
    // After every value not above v: the stable sort keeps an equal value that came later after the earlier ones.
    let lo = 0;
    let hi = this.s.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (v < this.s[m]) hi = m;
      else lo = m + 1;
    }
    this.s.splice(lo, 0, v);
  }

  /** Removes the oldest value held, `v`: of values equal to it, the oldest is the first in sorted order. */
  removeOldest(v: number): void {
    let lo = 0;
    let hi = this.s.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (this.s[m] < v) lo = m + 1;
      else hi = m;
    }
    this.s.splice(lo, 1);
  }

  median(): number {
    const s = this.s;
    if (s.length === 0) return NaN;
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
  }
}

/** The last `n` values (with their steps, when given); mean and median over them. */
export class Window {
  private buf: number[] = [];
  private at: number[] = [];
  /**
   * The values in median's order, kept from the first `median` on (most windows are only averaged): a rule that
   * asks for a rolling median at every step (grad_norm_spike, success_collapse's noise, length_runaway) sorted a
   * copy of 20-50 values each time, most of the detector's time on an imported verl run. Dropped while the window
   * holds a NaN, which median sorts as before.
   */
  private sorted: SortedValues | null = null;
  private nans = 0;
  constructor(public n: number) {}
  /** Change the length (a Cadence learnt the stream's logging interval); keeps the newest values. */
  resize(n: number): void {
    this.n = n;
    if (this.buf.length > n) {
      const drop = this.buf.length - n;
      for (let i = 0; i < drop; i++) this.forget(this.buf[i]);
      this.buf.splice(0, drop);
      this.at.splice(0, this.at.length - n);
    }
  }
  push(v: number, step = NaN): void {
    this.buf.push(v);
    this.at.push(step);
    if (Number.isNaN(v)) {
      this.nans++;
      this.sorted = null;
    } else this.sorted?.add(v);
    if (this.buf.length > this.n) {
      this.forget(this.buf[0]);
      this.buf.shift();
      this.at.shift();
    }
  }
  /** The oldest value leaves the window. */
  private forget(v: number): void {
    if (Number.isNaN(v)) this.nans--;
    else this.sorted?.removeOldest(v);
  }
  /** The logged points in the window (oldest first): what a mean over it is a mean of. */
  points(): Pt[] {
    return this.buf.map((value, i) => ({ step: this.at[i], value }));
  }
  /** First and last step in the window. */
  get firstStep(): number {
    return this.at.length ? this.at[0] : NaN;
  }
  get lastStep(): number {
    return this.at.length ? this.at[this.at.length - 1] : NaN;
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
    if (this.nans > 0) return median(this.buf);
    if (this.sorted === null) {
      this.sorted = new SortedValues();
      for (const v of this.buf) this.sorted.add(v);
    }
    return this.sorted.median();
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
  constructor(
    public n: number,
    private readonly summary: (xs: readonly number[]) => number = median,
  ) {}
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

/** A share as a percentage: whole percents, two significant digits under 1 % (a verl clip fraction of 0.002). */
export function pct(v: number): string {
  const p = v * 100;
  if (p !== 0 && Math.abs(p) < 1) return `${Number(p.toPrecision(2))} %`;
  return `${Math.round(p)} %`;
}

/** The point of `pts` with the largest (`dir` 'up') or smallest value; the earliest on ties. */
export function extreme(pts: readonly Pt[], dir: 'up' | 'down'): Pt | null {
  let best: Pt | null = null;
  for (const p of pts) if (best === null || (dir === 'up' ? p.value > best.value : p.value < best.value)) best = p;
  return best;
}

/** "step 7" or "steps 5–7". */
export function span(first: number, last: number): string {
  return first === last ? `step ${first}` : `steps ${first}–${last}`;
}

/**
 * Measurement noise of a metric from its own recent history: a robust standard deviation of one step's value,
 * 1.4826 · median |x_t − x_{t−1}| / √2 (MAD of first differences; trends barely move it, a collapse is a few
 * large differences among many small ones). Small laptop batches make success rates very noisy (8 episodes →
 * σ ≈ 0.16 at p = 0.3), so "fell from its best" must be judged against this, not only in absolute terms.
 */
export class NoiseEstimator {
  /** The last `window` first differences (a Window: its median is kept sorted, not sorted per call). */
  private readonly diffs: Window;
  private prev: number | null = null;
  constructor(readonly window: number) {
    this.diffs = new Window(window);
  }
  push(v: number): void {
    if (this.prev !== null) this.diffs.push(Math.abs(v - this.prev));
    this.prev = v;
  }
  get samples(): number {
    return this.diffs.size;
  }
  /** σ of a single value (0 until two values were seen). */
  sigma(): number {
    if (this.diffs.size === 0) return 0;
    return (1.4826 * this.diffs.median()) / Math.SQRT2;
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

/**
 * The logged points of one metric through an event (a streak of a rule's condition), so that a message quotes
 * logged values at the steps it names and the alert's window opens where the event did: a smoothed mean crosses
 * a level points after the value that pushed it there (a KL of 6.4 at step 2 lifts the 3-step mean until step 4).
 * The last `keep` points sit in a ring of numbers: every rule feeds one per metric per step, so no object is
 * made per point (an imported verl step carries ~140 keys).
 */
export class Episode {
  private steps: Float64Array;
  private values: Float64Array;
  private start = 0;
  private len = 0;
  private isOpen = false;
  private exStep = NaN;
  private exValue = NaN;
  /** First logged step of the event. */
  onset = NaN;
  /** The point before the event's first one (null when there was none). */
  before: Pt | null = null;
  /** `by`: what "largest" compares (|x| for a KL estimate that may come out negative). */
  constructor(
    private readonly dir: 'up' | 'down',
    private readonly by: (v: number) => number = (v) => v,
    private readonly keep = 64,
  ) {
    this.steps = new Float64Array(keep);
    this.values = new Float64Array(keep);
  }
  push(step: number, value: number): void {
    const i = (this.start + this.len) % this.keep;
    this.steps[i] = step;
    this.values[i] = value;
    if (this.len < this.keep) this.len++;
    else this.start = (this.start + 1) % this.keep;
    if (this.isOpen && this.beats(value, this.exValue)) {
      this.exStep = step;
      this.exValue = value;
    }
  }
  private beats(a: number, b: number): boolean {
    return this.dir === 'up' ? this.by(a) > this.by(b) : this.by(a) < this.by(b);
  }
  private at(k: number): Pt {
    const i = (this.start + k) % this.keep;
    return { step: this.steps[i], value: this.values[i] };
  }
  /**
   * The condition holds at the latest point. A closed event opens at the first of the last `lookback` points
   * that `beyond` accepts (the first of them when none does).
   */
  hold(lookback: number, beyond: (v: number) => boolean = () => true): void {
    if (this.isOpen || this.len === 0) return;
    this.isOpen = true;
    const from = Math.max(0, this.len - Math.max(1, lookback));
    const val = (k: number) => this.values[(this.start + k) % this.keep];
    let k = from;
    while (k < this.len - 1 && !beyond(this.by(val(k)))) k++;
    if (!beyond(this.by(val(k)))) k = from;
    this.onset = this.at(k).step;
    this.before = k > 0 ? this.at(k - 1) : null;
    this.exStep = NaN;
    this.exValue = NaN;
    for (let j = k; j < this.len; j++) {
      const v = val(j);
      if (Number.isNaN(this.exValue) || this.beats(v, this.exValue)) {
        this.exValue = v;
        this.exStep = this.steps[(this.start + j) % this.keep];
      }
    }
  }
  end(): void {
    this.isOpen = false;
  }
  get open(): boolean {
    return this.isOpen;
  }
  /** The event's extreme logged point (largest for 'up'); null before it opened. */
  get extreme(): Pt | null {
    return Number.isNaN(this.exStep) ? null : { step: this.exStep, value: this.exValue };
  }
  /** The last point pushed. */
  get latest(): Pt | null {
    return this.len ? this.at(this.len - 1) : null;
  }
}
