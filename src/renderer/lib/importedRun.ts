/**
 * The run view's reading of an imported run and of the detector's coverage (which rules ran):
 * which charts an imported run opens with, its "Source keys" table, and one line per rule. Pure, unit-tested.
 */
import type { RunRecord } from '../../shared/api';
import { importedSeed } from '../../shared/importedSeed';

/**
 * "seed 3", or "seed unknown" for an imported run whose source config named no seed: the importer stores 0 there
 * (the record's seed is an integer), which must not read as the source's own seed.
 */
export function seedLabel(rec: Pick<RunRecord, 'kind' | 'seed' | 'config'>): string {
  return rec.kind === 'imported' && importedSeed(rec.config) === null ? 'seed unknown' : `seed ${rec.seed}`;
}

/** How many charts an imported run opens with (the lab's own dashboard has ten). */
export const IMPORTED_CHART_COUNT = 10;
const MIN_CHARTS = 4;

/**
 * Charts an imported run opens with: the lab's dashboard keys the source fed (in dashboard order), then its
 * other catalog keys, then — when that leaves fewer than MIN_CHARTS (a log that mapped onto little or nothing) —
 * its own keys up to the cap; never a key it did not log (a verl PPO run has no KL loss: an empty "does not
 * apply" chart says nothing about it). `isCatalog` tells catalog keys apart (a followed run's keyMap is only
 * written when following ends, so the stored keys themselves are what is read).
 */
export function importedChartKeys(
  available: readonly string[],
  isCatalog: (key: string) => boolean,
  dashboard: readonly string[],
): string[] {
  const have = new Set(available);
  const out = dashboard.filter((k) => have.has(k));
  for (const k of [...available].sort()) if (isCatalog(k) && !out.includes(k)) out.push(k);
  if (out.length < MIN_CHARTS) for (const k of available) if (!out.includes(k) && out.length < IMPORTED_CHART_COUNT) out.push(k);
  return out.slice(0, IMPORTED_CHART_COUNT);
}

export interface SourceKeyRow {
  /** The key the run stores (a catalog key, or the source's own key when unmapped). */
  readonly key: string;
  /** The source key that fed it (equal to `key` when unmapped); null while a followed log is still read. */
  readonly source: string | null;
  readonly mapped: boolean;
}

/**
 * The "Source keys" table: mapped keys (catalog ← source) first, then the unmapped keys kept under their
 * names. A followed run's keyMap is written when following ends: until then its catalog keys are listed as
 * mapped with the source key not yet known.
 */
export function sourceKeyRows(
  keyMap: Readonly<Record<string, string>>,
  available: readonly string[],
  isCatalog: (key: string) => boolean = () => false,
): SourceKeyRow[] {
  const has = (k: string) => Object.prototype.hasOwnProperty.call(keyMap, k);
  const mapped: SourceKeyRow[] = [
    ...Object.entries(keyMap).map(([key, source]) => ({ key, source, mapped: true })),
    ...available.filter((k) => !has(k) && isCatalog(k)).map((key) => ({ key, source: null, mapped: true })),
  ].sort((a, b) => a.key.localeCompare(b.key));
  const unmapped = available
    .filter((k) => !has(k) && !isCatalog(k))
    .sort((a, b) => a.localeCompare(b))
    .map((key) => ({ key, source: key, mapped: false }));
  return [...mapped, ...unmapped];
}

export interface CoverageRow {
  readonly rule: string;
  readonly title: string;
  readonly applicable: boolean;
  readonly missing: readonly string[];
  readonly needs: 'all' | 'any';
}

/**
 * Why a rule did not run, in words: "needs actor/entropy", "needs one of actor/ppo_kl, actor/kl_loss".
 * `label` names a key for people (the catalog label) — the key itself is kept so it can be searched for.
 */
export function notApplicableReason(c: CoverageRow, label: (key: string) => string | undefined = () => undefined): string {
  if (c.missing.length === 0) return 'switched off in the detector settings';
  const named = c.missing.map((k) => {
    const l = label(k);
    return l && l !== k ? `${l} (${k})` : k;
  });
  if (c.needs === 'any' && named.length > 1) return `needs one of ${named.join(', ')} — the run logged none`;
  return `needs ${named.join(' and ')}, which the run did not log`;
}

/** The file name of a source path (POSIX or Windows separators). */
export function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1) || path;
}
