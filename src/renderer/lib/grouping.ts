/**
 * Group runs by a config key and summarise each group's curves as mean ± std bands with N (W&B's grouping).
 *
 * Runs in a group rarely share x values (different lengths, downsampled independently, wall-clock axes), so
 * curves are aligned either exactly (when the union of x values is small) or on equal-width x bins, where
 * each run contributes the mean of its finite points in the bin. N per point says how many runs contributed.
 */
import { formatValue, getPath } from './configPaths';

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

export interface Band {
  readonly x: number[];
  readonly mean: number[];
  readonly std: number[];
  readonly lo: number[];
  readonly hi: number[];
  /** Number of runs contributing at each point. */
  readonly n: number[];
}

function stats(vals: number[]): { mean: number; std: number } {
  const n = vals.length;
  let s = 0;
  for (const v of vals) s += v;
  const mean = s / n;
  if (n < 2) return { mean, std: 0 };
  let ss = 0;
  for (const v of vals) ss += (v - mean) * (v - mean);
  return { mean, std: Math.sqrt(ss / (n - 1)) };
}

/**
 * Mean ± (sample) std across runs. Exact alignment when the union of x values has at most `maxPoints`
 * entries, else `maxPoints` equal-width bins. Points where no run has a finite value are left out of the band
 * (the runs' own non-finite markers still show them).
 */
export function bandStats(series: readonly XY[], maxPoints = 400): Band {
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
  const centers: number[] = exact ? [...xs].sort((a, b) => a - b) : Array.from({ length: maxPoints }, (_, i) => min + ((i + 0.5) * (max - min)) / maxPoints);
  const index = exact ? new Map(centers.map((x, i) => [x, i])) : null;
  const binOf = (x: number): number => (index ? (index.get(x) as number) : Math.min(maxPoints - 1, Math.floor(((x - min) / (max - min)) * maxPoints)));
  const perBin: number[][] = centers.map(() => []);
  for (const s of series) {
    const sum = new Float64Array(centers.length);
    const cnt = new Uint32Array(centers.length);
    for (let i = 0; i < s.x.length; i++) {
      const v = s.y[i];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      const b = binOf(s.x[i]);
      sum[b] += v;
      cnt[b]++;
    }
    for (let b = 0; b < centers.length; b++) if (cnt[b] > 0) perBin[b].push(sum[b] / cnt[b]);
  }
  for (let b = 0; b < centers.length; b++) {
    const vals = perBin[b];
    if (vals.length === 0) continue;
    const { mean, std } = stats(vals);
    out.x.push(centers[b]);
    out.mean.push(mean);
    out.std.push(std);
    out.lo.push(mean - std);
    out.hi.push(mean + std);
    out.n.push(vals.length);
  }
  return out;
}
