/**
 * Shared plumbing of the text parsers: merging the records a log writes for one step, reading a source's
 * number spellings, and counting skipped inputs by reason.
 */
import type { SourceStep, StepSink } from './types';

/**
 * Collects records into steps. verl prints a validation-only line and a training line for the same step
 * (README 1c, 1d), and JSONL writers do the same, so consecutive records with the same (run, step) merge into
 * one step; a record with another step completes the pending one. Steps leave in source order; a step number
 * that goes down (a restarted process) simply starts a new step — main decides what a restart means.
 */
export class StepAccumulator {
  private run = '';
  private step = Number.NaN;
  private values: Record<string, number> | null = null;
  private wallTime: number | undefined;
  /** The step `flushPending` sent before it was complete; NaN when the last step left the usual way. */
  private early = Number.NaN;
  private earlyRun = '';
  /** Steps handed to the sink so far. */
  emitted = 0;
  private readonly keys: RunKeyBound;

  /** `skipped`: the parser's counts, where values arriving for a step already flushed early are counted. */
  constructor(
    private readonly onStep: StepSink,
    private readonly skipped?: Record<string, number>,
  ) {
    this.keys = new RunKeyBound(skipped);
  }

  /** Adds one record's values; later values for a key already present in the same step replace it. */
  add(step: number, values: Record<string, number>, run = '', wallTime?: number): void {
    this.keys.apply(run, values);
    if (this.values !== null && step === this.step && run === this.run) {
      Object.assign(this.values, values);
      if (wallTime !== undefined) this.wallTime = wallTime;
      return;
    }
    if (this.values === null && step === this.early && run === this.earlyRun) {
      // More lines of a step live follow already showed (flushPending): the store is append-only and keeps steps
      // strictly increasing, so they cannot join it; they are counted rather than sent as a second copy.
      if (this.skipped) bump(this.skipped, SKIP_LATE_VALUES);
      return;
    }
    this.flush();
    this.early = Number.NaN;
    this.run = run;
    this.step = step;
    this.values = values;
    this.wallTime = wallTime;
  }

  /**
   * The step number later lines may still belong to (a TRL eval dict, a DeepSpeed-Chat reward line), or NaN
   * when there is none: the step waiting to be completed, or the one flushPending sent early.
   */
  get pendingStep(): number {
    return this.values === null ? this.early : this.step;
  }

  flush(): void {
    if (this.values === null) return;
    const s: SourceStep =
      this.wallTime === undefined
        ? { run: this.run, step: this.step, values: this.values }
        : { run: this.run, step: this.step, values: this.values, wallTime: this.wallTime };
    this.values = null;
    this.emitted++;
    this.onStep(s);
  }

  /**
   * Live follow, when the log has been quiet: send the waiting step now instead of when the next step begins.
   * Lines for that same step that still arrive afterwards are counted under SKIP_LATE_VALUES, never sent again.
   */
  flushPending(): void {
    if (this.values === null) return;
    this.early = this.step;
    this.earlyRun = this.run;
    this.flush();
  }
}

/**
 * A run's distinct keys, bounded: each record is bounded by MAX_RECORD_KEYS, but records that each bring new keys
 * made a run's key set, and the memory of every per-key structure after the parser, grow without bound (200 lines
 * of 9,000 new keys, a 31 MB JSONL file, took 13.4 GB to import). Used by StepAccumulator (the text parsers) and
 * by the tracker imports, whose readers hand steps to the importer directly.
 */
export class RunKeyBound {
  /** Per run, the distinct keys it has carried so far (at most MAX_RUN_KEYS each). */
  private runKeys = new Map<string, Set<string>>();
  /** Per run, the keys of its last record in their order: nearly every record repeats them (the fast path). */
  private lastKeys = new Map<string, string[]>();

  /** `skipped`: where each value left out is counted (SKIP_KEYS_PAST_RUN_LIMIT). */
  constructor(private readonly skipped?: Record<string, number>) {}

  /** Leaves out of `values` (the caller's to change) the keys past the first MAX_RUN_KEYS its run has carried. */
  apply(run: string, values: Record<string, number>): void {
    const last = this.lastKeys.get(run);
    if (last !== undefined) {
      let i = 0;
      let same = true;
      for (const k in values)
        if (k !== last[i++]) {
          same = false;
          break;
        }
      if (same && i === last.length) return;
    }
    let seen = this.runKeys.get(run);
    if (seen === undefined) this.runKeys.set(run, (seen = new Set()));
    let dropped = 0;
    for (const k in values) {
      if (seen.has(k)) continue;
      if (seen.size < MAX_RUN_KEYS) seen.add(k);
      else {
        delete values[k];
        dropped++;
      }
    }
    if (dropped > 0 && this.skipped) bump(this.skipped, SKIP_KEYS_PAST_RUN_LIMIT, dropped);
    this.lastKeys.set(run, Object.keys(values));
  }
}

/** Most distinct keys one run may carry (TensorBoard's tags have the same bound); real runs carry up to a few hundred. */
export const MAX_RUN_KEYS = 10_000;

/** Skip reason: a value whose key is new to its run after it already carried MAX_RUN_KEYS keys (counted per value). */
export const SKIP_KEYS_PAST_RUN_LIMIT = `value of a key past the first ${MAX_RUN_KEYS} keys of its run`;

/** Skip reason: lines for a step live follow already showed (see StepAccumulator.flushPending). */
export const SKIP_LATE_VALUES = 'lines for a step already shown live';

/** Counts by reason, for `ParserBase.skipped`. */
export function bump(counts: Record<string, number>, reason: string, by = 1): void {
  counts[reason] = (counts[reason] ?? 0) + by;
}

/**
 * A metric value as Python-based loggers print it: plain numbers, `nan`, `inf`, `-inf` (any case; Python's
 * repr of float('nan') is `nan`), `NaN`/`Infinity` (JSON-ish writers), numpy/torch scalar reprs such as
 * `np.float64(0.1)`, `np.int64(3)`, `tensor(0.5)` (numpy ≥ 2 prints the type around the value), and
 * `True`/`False`. Returns undefined for anything else (a string metric, model text). Never returns a number
 * for an empty string (`Number('')` is 0).
 */
export function parseMetricNumber(raw: string): number | undefined {
  // Fast path: digits, sign or dot first — the spelling of nearly every value in a real log. Number() itself
  // accepts surrounding whitespace, so no trim (and no new string) is needed here.
  const c = raw.charCodeAt(0);
  if ((c >= 48 && c <= 57) || c === 45 || c === 46 || c === 43) {
    const n = Number(raw);
    if (!Number.isNaN(n)) return n;
  }
  const s = raw.trim();
  if (s.length === 0) return undefined;
  if (s !== raw) return parseMetricNumber(s);
  const open = s.indexOf('(');
  if (open > 0 && s.charCodeAt(s.length - 1) === 41 /* ) */) {
    const wrapper = s.slice(0, open);
    if (/^(?:np|numpy|torch)?\.?(?:float|int|uint|bfloat)\d*$|^tensor$|^np\.(?:float|int|uint)\d*$/.test(wrapper)) {
      // `tensor(0.5, device='cuda:0')`: the number is the first argument.
      const inner = s.slice(open + 1, -1);
      const comma = inner.indexOf(',');
      return parseMetricNumber(comma >= 0 ? inner.slice(0, comma) : inner);
    }
    return undefined;
  }
  switch (s.toLowerCase()) {
    case 'nan':
    case '+nan':
    case '-nan':
      return Number.NaN;
    case 'inf':
    case '+inf':
    case 'infinity':
    case '+infinity':
      return Number.POSITIVE_INFINITY;
    case '-inf':
    case '-infinity':
      return Number.NEGATIVE_INFINITY;
    case 'true':
      return 1;
    case 'false':
      return 0;
    default:
      return undefined;
  }
}

/**
 * Flattens a nested metrics object with `/` (`{"actor": {"lr": 1}}` → `actor/lr`), keeping numbers (and
 * null → NaN, the way verl's file logger writes NaN). `fromString` may turn a string into a number (the JSONL
 * reader's markers for bare NaN/Infinity); other strings, arrays and booleans are not metrics: their keys go
 * to `onIgnored` so the parser can say so in its notes. `skipKey` (top level only) is left out — the step field
 * of a flat record.
 */
/** Deepest nesting a record's values may have; real logs nest a few levels (verl's `data`, W&B's sections). */
export const MAX_RECORD_DEPTH = 64;
/** Most values one record may carry; real steps carry tens to a few hundred. */
export const MAX_RECORD_KEYS = 10_000;

/** A record past MAX_RECORD_DEPTH or MAX_RECORD_KEYS: the parser skips it and counts it under `reason`. */
export class RecordLimitError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'RecordLimitError';
  }
}

export function flattenNumeric(
  obj: Record<string, unknown>,
  out: Record<string, number>,
  onIgnored: (key: string) => void,
  fromString?: (s: string) => number | undefined,
  prefix = '',
  skipKey?: string,
  depth = 0,
  count = { n: 0 },
): void {
  // Checked on the way down, so a line nested 5,000 deep is refused before the stack is (not a RangeError).
  if (depth >= MAX_RECORD_DEPTH) throw new RecordLimitError(`record nested deeper than ${MAX_RECORD_DEPTH} levels`);
  for (const k in obj) {
    if (k === skipKey) continue;
    if (++count.n > MAX_RECORD_KEYS) throw new RecordLimitError(`record with more than ${MAX_RECORD_KEYS} values`);
    const v = obj[k];
    const key = prefix === '' ? k : `${prefix}/${k}`;
    if (typeof v === 'number') out[key] = v;
    else if (v === null) out[key] = Number.NaN;
    else if (typeof v === 'object' && !Array.isArray(v))
      flattenNumeric(v as Record<string, unknown>, out, onIgnored, fromString, key, undefined, depth + 1, count);
    else {
      const n = typeof v === 'string' && fromString ? fromString(v) : undefined;
      if (n === undefined) onIgnored(key);
      else out[key] = n;
    }
  }
}

const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/**
 * The plain decimal `-?digits[.digits]` in `s[from, to)` without making a substring, or undefined when the text
 * is anything else (then the caller falls back to parseMetricNumber). Exact: with at most 15 significant
 * digits the digits form an integer m < 2^53 and 10^k (k ≤ 22) is exact too, so m / 10^k is the correctly
 * rounded double of the decimal — the same number Number() returns (Clinger's fast path). verl prints
 * `%.3f`-style values, so nearly every value of a console log takes this path.
 */
export function fastDecimal(s: string, from: number, to: number): number | undefined {
  let i = from;
  let neg = false;
  if (s.charCodeAt(i) === 45) {
    neg = true;
    i++;
  }
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48);
      digits++;
      if (frac >= 0) frac++;
    } else if (c === 46 && frac < 0) frac = 0;
    else return undefined;
  }
  if (digits === 0 || digits > 15 || frac === 0) return undefined;
  const v = frac > 0 ? m / POW10[frac] : m;
  return neg ? -v : v;
}
