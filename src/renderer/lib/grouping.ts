/**
 * Group runs by a config key and summarise each group's curves as mean ± std bands with N (W&B's grouping).
 *
 * Runs in a group rarely share x values (different lengths, downsampled independently, wall-clock axes), so
 * curves are aligned either exactly (when the union of x values is small) or on equal-width x bins, where
 * each run contributes the mean of its finite points in the bin. N per point says how many runs contributed.
 *
 * A point is kept only where every run whose logged span covers it contributes: runs validated at different
 * steps (every 10 vs every 15) would otherwise alternate between one run's value and another's, a zig-zag that
 * no run drew. Past a shorter run's last point N drops, which the band's N shows. "Logged" means a
 * point at that x: a dense metric's non-finite value (null) was logged and only lowers N there, while in a
 * sparse series (mostly null: the trainer logs NaN for validation keys on steps without validation) a null is
 * a step the run did not log.
 */
import { formatValue, getPath } from './configPaths';
import { isSparse } from './chartOptions';

export interface RunConfigRef {
  readonly id: string;
  readonly config: unknown;
}

export interface XY {
  readonly x: readonly number[];
  readonly y: readonly (number | null)[];
}

export interface Group {
  /** Display value of the key for this group ('—' when the run lacks it). */
  readonly value: string;
  readonly runIds: readonly string[];
}

/** Groups runs by the value at a dotted config path, in first-seen order. */
export function groupRuns(runs: readonly RunConfigRef[], path: string): Group[] {
  const groups = new Map<string, string[]>();
  for (const r of runs) {
    const v = getPath(r.config, path);
    const key = formatValue(v);
    const list = groups.get(key);
    if (list) list.push(r.id);
    else groups.set(key, [r.id]);
  }
  return [...groups].map(([value, runIds]) => ({ value, runIds }));
}

/** What the shaded band spans around the mean: ±1 sample std (W&B's default), ±1 standard error, or min–max. */
export type BandKind = 'std' | 'se' | 'minmax';

export const BAND_KINDS: readonly { kind: BandKind; label: string }[] = [
  { kind: 'std', label: '± std' },
  { kind: 'se', label: '± std error' },
  { kind: 'minmax', label: 'min – max' },
];

export interface Band {
  readonly x: number[];
  readonly mean: number[];
  readonly std: number[];
  readonly lo: number[];
  readonly hi: number[];
  /** Number of runs contributing at each point. */
  readonly n: number[];
}

function stats(vals: number[]): { mean: number; std: number; min: number; max: number } {
  const n = vals.length;
  let s = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of vals) {
    s += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = s / n;
  if (n < 2) return { mean, std: 0, min, max };
  let ss = 0;
  for (const v of vals) ss += (v - mean) * (v - mean);
  return { mean, std: Math.sqrt(ss / (n - 1)), min, max };
}

/**
 * Mean and a band (`kind`) across runs. Exact alignment when the union of x values has at most `maxPoints`
 * entries, else `maxPoints` equal-width bins. Points where no run has a finite value are left out of the band
 * (the runs' own non-finite markers still show them), and so are points that a run covering them did not log
 * (see the file comment).
 */
export function bandStats(series: readonly XY[], maxPoints = 400, kind: BandKind = 'std'): Band {
  const out: Band = { x: [], mean: [], std: [], lo: [], hi: [], n: [] };
  if (series.length === 0) return out;
  const xs = new Set<number>();
  let min = Infinity;
  let max = -Infinity;
  for (const s of series) {
    for (const x of s.x) {
      xs.add(x);
      if (x < min) min = x;
      if (x > max) max = x;
    }
  }
  if (xs.size === 0) return out;
  const exact = xs.size <= maxPoints || min === max;
  const centers: number[] = exact
    ? [...xs].sort((a, b) => a - b)
    : Array.from({ length: maxPoints }, (_, i) => min + ((i + 0.5) * (max - min)) / maxPoints);
  const index = exact ? new Map(centers.map((x, i) => [x, i])) : null;
  const binOf = (x: number): number =>
    index ? (index.get(x) as number) : Math.min(maxPoints - 1, Math.floor(((x - min) / (max - min)) * maxPoints));
  const perBin: number[][] = centers.map(() => []);
  /** Bins inside some run's finite span where that run has no point: left out. */
  const gap = new Uint8Array(centers.length);
  for (const s of series) {
    const sum = new Float64Array(centers.length);
    const cnt = new Uint32Array(centers.length);
    const logged = new Uint8Array(centers.length);
    const sparse = isSparse(s.y);
    let first = -1;
    let last = -1;
    for (let i = 0; i < s.x.length; i++) {
      const v = s.y[i];
      const finite = v !== null && v !== undefined && Number.isFinite(v);
      if (!finite && sparse) continue;
      const b = binOf(s.x[i]);
      logged[b] = 1;
      if (first < 0 || b < first) first = b;
      if (b > last) last = b;
      if (!finite) continue;
      sum[b] += v;
      cnt[b]++;
    }
    for (let b = 0; b < centers.length; b++) {
      if (cnt[b] > 0) perBin[b].push(sum[b] / cnt[b]);
      else if (!logged[b] && first >= 0 && b > first && b < last) gap[b] = 1;
    }
  }
  for (let b = 0; b < centers.length; b++) {
    const vals = perBin[b];
    if (vals.length === 0 || gap[b]) continue;
    const st = stats(vals);
    const half = kind === 'se' ? st.std / Math.sqrt(vals.length) : st.std;
    out.x.push(centers[b]);
    out.mean.push(st.mean);
    out.std.push(st.std);
    out.lo.push(kind === 'minmax' ? st.min : st.mean - half);
    out.hi.push(kind === 'minmax' ? st.max : st.mean + half);
    out.n.push(vals.length);
  }
  return out;
}

/**
 * The band's edges clipped to what the metric can take (a ratio's band stays within 0…1): a mean ± std near a
 * bound otherwise draws a band over values no run can have.
 */
export function clipBand(b: Band, range: { readonly min?: number; readonly max?: number } | null): Band {
  if (!range || (range.min === undefined && range.max === undefined)) return b;
  const lo = range.min ?? -Infinity;
  const hi = range.max ?? Infinity;
  const clip = (v: number) => Math.min(hi, Math.max(lo, v));
  return { ...b, lo: b.lo.map(clip), hi: b.hi.map(clip) };
}
