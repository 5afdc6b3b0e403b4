/**
 * Which charts a view opens with when the runs are imported (verl, TRL, W&B …): chosen from what they actually
 * logged, as W&B builds its default workspace from the logged keys. Headline numbers first (validation, then
 * training success or score), then the stability dashboard, then other catalog keys in catalog order, then the
 * source's own keys; and never a panel that says nothing: a key no run logged a finite value for, or one whose
 * every value is the same (a KL coefficient or learning rate echoed from the config, an LR printed as 0.000).
 * Pure, unit-tested.
 */
import { TRAIN_SUCCESS_KEYS, VALIDATION_KEYS } from '../../shared/headline';

/** How many panels the default workspace has (the lab's own dashboard has ten). */
export const DEFAULT_PANEL_COUNT = 10;
/** How many candidates are fetched to choose them from (one runs.metrics request allows 64 keys). */
export const PANEL_CANDIDATES = 24;

export const HEADLINE_PANEL_KEYS: readonly string[] = [...VALIDATION_KEYS, ...TRAIN_SUCCESS_KEYS];

/**
 * The keys to consider, best first: headline keys the runs logged, the dashboard's, other catalog keys (in
 * `catalogOrder`), then the runs' own keys; at most `max`.
 */
export function panelCandidates(
  logged: readonly string[],
  catalogOrder: readonly string[],
  dashboard: readonly string[],
  max = PANEL_CANDIDATES,
): string[] {
  const have = new Set(logged);
  const out: string[] = [];
  const add = (k: string) => {
    if (have.has(k) && !out.includes(k)) out.push(k);
  };
  HEADLINE_PANEL_KEYS.forEach(add);
  dashboard.forEach(add);
  catalogOrder.forEach(add);
  [...logged].sort().forEach(add);
  return out.slice(0, max);
}

/** A series' values (one per logged point; null for a step without a finite value). */
export interface PanelSeries {
  readonly y: readonly (number | null)[];
}

/**
 * Whether a panel of these series (one per run) shows something: two different finite values anywhere, or —
 * for a validation key, logged once at the end by many verl runs — one finite value.
 */
export function informative(key: string, series: readonly PanelSeries[]): boolean {
  let first: number | null = null;
  for (const s of series) {
    for (const v of s.y) {
      if (v === null || !Number.isFinite(v)) continue;
      if (first === null) first = v;
      else if (v !== first) return true;
    }
  }
  return first !== null && (VALIDATION_KEYS as readonly string[]).includes(key);
}

/** The first `count` candidates whose series are informative (`seriesOf` gives a key's series across the runs). */
export function choosePanels(
  candidates: readonly string[],
  seriesOf: (key: string) => readonly PanelSeries[],
  count = DEFAULT_PANEL_COUNT,
): string[] {
  return candidates.filter((k) => informative(k, seriesOf(k))).slice(0, count);
}
