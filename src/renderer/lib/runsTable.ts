/** Filtering and sorting of the runs table (client side: the list is small and the view must feel instant). */
import type { RunStatus, RunSummary } from '../../shared/api';

export type RunSortKey = 'name' | 'env' | 'preset' | 'status' | 'success' | 'step' | 'alerts' | 'createdAt';

export interface RunFilter {
  readonly search?: string;
  readonly status?: RunStatus | 'active' | '';
  readonly env?: string;
  readonly preset?: string;
  readonly tag?: string;
}

export const SUCCESS_KEY = 'episode/success_rate';

/** The success figure shown for a run: the latest training success rate from its summary. */
export function runSuccess(r: RunSummary): number | null {
  const v = r.summary[SUCCESS_KEY];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export function filterRuns(runs: readonly RunSummary[], f: RunFilter): RunSummary[] {
  const words = (f.search ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  return runs.filter((r) => {
    if (f.status === 'active' && !(r.status === 'running' || r.status === 'queued' || r.status === 'paused')) return false;
    if (f.status && f.status !== 'active' && r.status !== f.status) return false;
    if (f.env && r.env !== f.env) return false;
    if (f.preset && r.preset !== f.preset) return false;
    if (f.tag && !r.tags.includes(f.tag)) return false;
    if (words.length) {
      const hay = [r.name, r.id, r.env, r.preset, r.status, ...r.tags].join(' ').toLowerCase();
      if (!words.every((w) => hay.includes(w))) return false;
    }
    return true;
  });
}

function sortValue(r: RunSummary, key: RunSortKey): string | number | null {
  switch (key) {
    case 'name':
      return r.name.toLowerCase();
    case 'env':
      return r.env;
    case 'preset':
      return r.preset;
    case 'status':
      return r.status;
    case 'success':
      return runSuccess(r);
    case 'step':
      return r.step;
    case 'alerts':
      return r.alertCount;
    case 'createdAt':
      return r.createdAt;
  }
}

/** Stable sort; missing values (null) always last whatever the direction. */
export function sortRuns(runs: readonly RunSummary[], key: RunSortKey, dir: 'asc' | 'desc'): RunSummary[] {
  const sign = dir === 'asc' ? 1 : -1;
  return runs
    .map((r, i) => ({ r, i, v: sortValue(r, key) }))
    .sort((a, b) => {
      if (a.v === null && b.v === null) return a.i - b.i;
      if (a.v === null) return 1;
      if (b.v === null) return -1;
      const c = a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
      return c !== 0 ? c * sign : a.i - b.i;
    })
    .map((x) => x.r);
}

/** Parses a comma-separated tag field into a clean, de-duplicated list. */
export function parseTags(text: string): string[] {
  return [...new Set(text.split(',').map((t) => t.trim()).filter(Boolean))];
}
