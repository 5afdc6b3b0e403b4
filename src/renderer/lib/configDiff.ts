/**
 * The compare view's config diff: one row per dotted config path, one column per run, differences only by
 * default (W&B's "show differences only").
 */
import { flatten, formatValue } from './configPaths';

export interface DiffInput {
  readonly id: string;
  readonly config: unknown;
}

export interface DiffRow {
  readonly path: string;
  /** Display value per run, in input order; '—' when the run has no such field. */
  readonly values: readonly string[];
  readonly differs: boolean;
}

export function diffConfigs(runs: readonly DiffInput[], opts: { onlyDifferences?: boolean } = {}): DiffRow[] {
  const onlyDiff = opts.onlyDifferences ?? true;
  const flats = runs.map((r) => flatten(r.config));
  const paths = new Set<string>();
  for (const f of flats) for (const p of Object.keys(f)) paths.add(p);
  const rows: DiffRow[] = [];
  for (const path of [...paths].sort()) {
    const values = flats.map((f) => (path in f ? formatValue(f[path]) : '—'));
    const differs = values.some((v) => v !== values[0]);
    if (onlyDiff && !differs) continue;
    rows.push({ path, values, differs });
  }
  return rows;
}

/**
 * Config keys worth grouping by: those whose value differs between the given runs, seed last (grouping by
 * seed is rarely what you want — usually you group by everything *except* the seed).
 */
export function groupableKeys(runs: readonly DiffInput[]): string[] {
  const keys = diffConfigs(runs, { onlyDifferences: true }).map((r) => r.path);
  return keys.sort((a, b) => Number(a === 'seed') - Number(b === 'seed') || a.localeCompare(b));
}
