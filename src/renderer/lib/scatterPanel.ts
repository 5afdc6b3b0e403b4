/**
 * Compare's scatter panel: one point per run, at two of its headline numbers (RunSummary.summary: last values
 * and `best/…`), as W&B's scatter plot of summary metrics across runs — e.g. best validation score against last
 * entropy, to see which runs that trade off. Pure, unit-tested; drawn by the same chart component as the lines.
 */
import type { RunRecord } from '../../shared/api';
import type { MetricChartInput } from './chartOptions';

/** Keys at least one of the runs has a finite headline value for, sorted (validation and success first). */
export function scatterKeys(runs: readonly Pick<RunRecord, 'summary'>[]): string[] {
  const keys = new Set<string>();
  for (const r of runs) for (const [k, v] of Object.entries(r.summary)) if (typeof v === 'number' && Number.isFinite(v)) keys.add(k);
  const rank = (k: string) => (k.includes('val/') ? 0 : k.includes('success') || k.includes('score') ? 1 : 2);
  return [...keys].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** The two keys a scatter opens with: the first two of `scatterKeys`, or null with fewer than two. */
export function defaultScatterAxes(keys: readonly string[]): { x: string; y: string } | null {
  return keys.length >= 2 ? { x: keys[1], y: keys[0] } : null;
}

export interface ScatterModel {
  readonly input: MetricChartInput;
  /** Runs left out: no finite value for one of the two keys. */
  readonly missing: readonly string[];
}

export function scatterModel(
  runs: readonly Pick<RunRecord, 'id' | 'name' | 'summary'>[],
  colors: ReadonlyMap<string, string>,
  xKey: string,
  yKey: string,
  dark: boolean,
): ScatterModel {
  const missing: string[] = [];
  const lines: MetricChartInput['lines'][number][] = [];
  for (const r of runs) {
    const x = r.summary[xKey];
    const y = r.summary[yKey];
    if (typeof x !== 'number' || !Number.isFinite(x) || typeof y !== 'number' || !Number.isFinite(y)) {
      missing.push(r.name);
      continue;
    }
    lines.push({ name: r.name, color: colors.get(r.id) ?? '#888', x: [x], y: [y], smoothed: null, nonFinite: [], marker: true });
  }
  return {
    input: { title: `${yKey} against ${xKey}`, unit: 'one point per run', xName: xKey, xKind: 'value', theme: { dark }, lines },
    missing,
  };
}
