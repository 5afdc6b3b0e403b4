/**
 * Filtering, sorting and columns of the runs table (client side: the list is small and the view must feel
 * instant). A column, a sort and a query read a field the same way (runQuery.ts `fieldValue`).
 */
import type { RunStatus, RunSummary } from '../../shared/api';
import { VAL_SUCCESS_KEY } from './metricKeys';
import { TRAIN_SUCCESS_KEYS, VALIDATION_KEYS, headlineOf } from '../../shared/headline';
import { configKeys, configValue, isQuery, matchesQuery, parseQuery, summaryKeys, summaryValue } from './runQuery';

export { summaryValue } from './runQuery';

export type RunSortKey =
  | 'name'
  | 'seed'
  | 'env'
  | 'preset'
  | 'status'
  | 'validation'
  | 'success'
  | 'step'
  | 'eta'
  | 'alerts'
  | 'createdAt'
  | `summary:${string}`
  | `config:${string}`;

/**
 * Columns the table can add from a run's headline numbers (RunSummary.summary, store/summary.ts), as the
 * trackers' runs tables add summary metrics: the last value of a key, or its best (`best/…`). `pct` keys are
 * rates shown as percentages.
 */
export const SUMMARY_COLUMNS: readonly { readonly key: string; readonly label: string; readonly pct: boolean; readonly title: string }[] = [
  {
    key: 'best/val/success_rate',
    label: 'Best validation',
    pct: true,
    title: 'Highest held-out validation success the run reached (val/success_rate)',
  },
  {
    key: 'best/episode/success_rate',
    label: 'Best train success',
    pct: true,
    title: 'Highest training success rate over its steps (episode/success_rate)',
  },
  { key: 'episode/reward_mean', label: 'Return', pct: false, title: 'Mean episode return at the last step (episode/reward_mean)' },
  {
    key: 'episode/score_mean',
    label: 'Score',
    pct: false,
    title: 'Task score at the last step (episode/score_mean; what verl and TRL runs log)',
  },
  { key: 'best/val/score_mean', label: 'Best val score', pct: false, title: 'Highest validation score (val/score_mean)' },
  {
    key: 'episode/valid_format_ratio',
    label: 'Valid format',
    pct: true,
    title: 'Share of well-formed <think>…</think><action>…</action> outputs at the last step',
  },
  { key: 'episode/valid_action_ratio', label: 'Valid action', pct: true, title: 'Share of admissible actions at the last step' },
  { key: 'actor/grad_norm', label: 'Grad norm', pct: false, title: 'Gradient norm at the last step (actor/grad_norm)' },
  { key: 'actor/entropy', label: 'Entropy', pct: false, title: 'Policy entropy at the last step (actor/entropy)' },
];

/** Where the table kept its added columns before workspaces were saved per project (read once, then moved). */
export const COLUMNS_STORAGE_KEY = 'arlarena.runs.columns';

/** A column the table can add: a headline number (`key` is its summary key) or a config key (`config:<path>`). */
export interface SummaryColumn {
  readonly key: string;
  readonly label: string;
  readonly pct: boolean;
  readonly title: string;
  readonly kind: 'summary' | 'config';
}

/** The column id of a config key. */
export function configColumn(path: string): string {
  return `config:${path}`;
}

/**
 * Every column the table can add: the named headline numbers above, then any other headline number the runs
 * carry (an imported run's `val/score_mean`, …), then every config key (those that differ between the runs
 * first), as W&B's runs table offers every summary metric and config key.
 */
export function summaryColumnChoices(runs: readonly RunSummary[]): SummaryColumn[] {
  const named = new Set(SUMMARY_COLUMNS.map((c) => c.key));
  return [
    ...SUMMARY_COLUMNS.map((c) => ({ ...c, kind: 'summary' as const })),
    ...summaryKeys(runs)
      .filter((k) => !named.has(k))
      .map((key) => ({
        key,
        label: key,
        pct: false,
        title: `${key}: the run's ${key.startsWith('best/') ? 'best' : 'last'} value`,
        kind: 'summary' as const,
      })),
    ...configKeys(runs).map((path) => ({
      key: configColumn(path),
      label: path,
      pct: false,
      title: `${path}: the run's config value`,
      kind: 'config' as const,
    })),
  ];
}

/** The column of a stored key, also when no run carries it now (a config column stays a config column). */
export function columnOf(key: string, choices: readonly SummaryColumn[]): SummaryColumn {
  const hit = choices.find((c) => c.key === key);
  if (hit) return hit;
  const config = key.startsWith('config:');
  return { key, label: config ? key.slice('config:'.length) : key, pct: false, title: key, kind: config ? 'config' : 'summary' };
}

/** The sort key of an added column. */
export function columnSortKey(c: Pick<SummaryColumn, 'key' | 'kind'>): RunSortKey {
  return c.kind === 'config' ? (c.key as `config:${string}`) : `summary:${c.key}`;
}

/** What an added column's cell holds for a run (null: the run has no such value). */
export function columnValue(r: RunSummary, c: Pick<SummaryColumn, 'key' | 'kind'>): string | number | boolean | null {
  return c.kind === 'config' ? configValue(r, c.key.slice('config:'.length)) : summaryValue(r, c.key);
}

/** A stored column key: a summary key (`val/score_mean`, `best/val/success_rate`) or `config:<path>`. */
export const COLUMN_KEY = /^[A-Za-z0-9_./@():-]{1,200}$/;

/** Column keys kept from an untrusted list (storage, an address): strings of the right shape, each once, at most 50. */
export function cleanColumns(v: unknown): string[] {
  return [...new Set(Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && COLUMN_KEY.test(x)) : [])].slice(0, 50);
}

/** The added columns as the table kept them before per-project workspaces (runsWorkspace.ts moves them). */
export function loadColumns(store: Pick<Storage, 'getItem'> | undefined): string[] {
  try {
    return cleanColumns(JSON.parse(store?.getItem(COLUMNS_STORAGE_KEY) ?? '[]'));
  } catch {
    return [];
  }
}

export function saveColumns(store: Pick<Storage, 'setItem'> | undefined, keys: readonly string[]): void {
  try {
    store?.setItem(COLUMNS_STORAGE_KEY, JSON.stringify(keys));
  } catch {
    // Storage full or disabled: the columns simply do not outlive the page.
  }
}

export interface RunFilter {
  readonly search?: string;
  readonly status?: RunStatus | 'active' | '';
  readonly env?: string;
  readonly preset?: string;
  readonly tag?: string;
}

export const SUCCESS_KEY = 'episode/success_rate';

/**
 * The success figure shown for a run: the latest training success rate from its summary, else (an imported
 * verl / TRL run, which logs scores) its latest task score (shared/headline.ts, as `arlarena show` prints).
 */
export function runSuccess(r: RunSummary): number | null {
  return headlineOf(r.summary, TRAIN_SUCCESS_KEYS)?.value ?? null;
}

export const VAL_EPISODES_KEY = 'val/episodes';

export { shortId } from '../../shared/shortId';

/** z for a two-sided 95 % interval (the same constant as src/core/training/wilson.ts). */
const Z95 = 1.959963984540054;

export interface ValSuccess {
  readonly rate: number;
  /** The key it is from: val/success_rate, or val/score_mean for a run that logs a validation score. */
  readonly key: string;
  /** 95 % Wilson interval; null when the record has no episode count to size it. */
  readonly lo: number | null;
  readonly hi: number | null;
  readonly n: number | null;
}

/**
 * The run's last held-out validation success with its 95 % Wilson interval (Wilson 1927, as `arlarena eval`
 * prints it), n from the last `val/episodes`. Null when the run never validated.
 */
export function runValSuccess(r: RunSummary): ValSuccess | null {
  const hit = headlineOf(r.summary, VALIDATION_KEYS);
  if (!hit) return null;
  const p = hit.value;
  const key = hit.key;
  // A validation score (verl's mean@1) is no share of episodes: no binomial interval for it.
  const n = key === VAL_SUCCESS_KEY ? r.summary[VAL_EPISODES_KEY] : null;
  if (typeof n !== 'number' || !Number.isInteger(n) || n <= 0 || p < 0 || p > 1) return { rate: p, key, lo: null, hi: null, n: null };
  const z2 = Z95 * Z95;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { rate: p, key, lo: p === 0 ? 0 : Math.max(0, centre - half), hi: p === 1 ? 1 : Math.min(1, centre + half), n };
}

/** "41.5 % [34.9–48.4]" or "41.5 %" without n; "—" when the run never validated. */
export function fmtValSuccess(v: ValSuccess | null): string {
  if (!v) return '—';
  const pc = (x: number): string => (100 * x).toFixed(1);
  return v.lo === null || v.hi === null ? `${pc(v.rate)} %` : `${pc(v.rate)} % [${pc(v.lo)}–${pc(v.hi)}]`;
}

/** How the validation episodes were decoded: "greedy" at temperature 0, "sampled (T 0.6)" above; null when unknown. */
export function valMode(r: RunSummary): string | null {
  const t = r.valTemperature;
  if (typeof t !== 'number' || !Number.isFinite(t)) return null;
  return t === 0 ? 'greedy' : `sampled (T ${t})`;
}

/** Seconds left for a running run (the record's estimate); null for any other status or without an estimate. */
export function runEta(r: RunSummary): number | null {
  if (r.status !== 'running') return null;
  const e = r.etaSeconds;
  return typeof e === 'number' && Number.isFinite(e) && e >= 0 ? e : null;
}

/**
 * The runs the table shows: the filter menus, then the search — plain words or a query (runQuery.ts). A query
 * that cannot be read filters nothing (the view says why under the box).
 */
export function filterRuns(runs: readonly RunSummary[], f: RunFilter): RunSummary[] {
  const search = (f.search ?? '').trim();
  const parsed = search === '' ? null : parseQuery(search);
  const clauses = parsed && 'clauses' in parsed ? parsed.clauses : null;
  return runs.filter((r) => {
    if (f.status === 'active' && !(r.status === 'running' || r.status === 'queued' || r.status === 'paused')) return false;
    if (f.status && f.status !== 'active' && r.status !== f.status) return false;
    if (f.env && r.env !== f.env) return false;
    if (f.preset && r.preset !== f.preset) return false;
    if (f.tag && !r.tags.includes(f.tag)) return false;
    return clauses === null || matchesQuery(r, clauses);
  });
}

/** Why the search filters nothing, or null (plain words, or a query that reads). */
export function searchError(search: string): string | null {
  if (!isQuery(search)) return null;
  const p = parseQuery(search);
  return 'error' in p ? p.error : null;
}

function sortValue(r: RunSummary, key: RunSortKey): string | number | null {
  switch (key) {
    case 'name':
      return r.name.toLowerCase();
    case 'seed':
      return r.seed;
    case 'env':
      return r.env;
    case 'preset':
      return r.preset;
    case 'status':
      return r.status;
    case 'validation':
      return runValSuccess(r)?.rate ?? null;
    case 'success':
      return runSuccess(r);
    case 'eta':
      return runEta(r);
    case 'step':
      return r.step;
    case 'alerts':
      return r.alertCount;
    case 'createdAt':
      return r.createdAt;
  }
  if (key.startsWith('config:')) {
    const v = configValue(r, key.slice('config:'.length));
    return typeof v === 'boolean' ? String(v) : v;
  }
  // `summary:<key>`: an added headline-number column.
  return summaryValue(r, key.slice('summary:'.length));
}

/** Numbers before text (a config key holding both), each in its own order. */
function compareValues(a: string | number, b: string | number): number {
  if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
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
      const c = compareValues(a.v, b.v);
      return c !== 0 ? c * sign : a.i - b.i;
    })
    .map((x) => x.r);
}

/** Parses a comma-separated tag field into a clean, de-duplicated list. */
export function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
}

/** Where the runs table keeps its ticked runs for the tab's session, so they survive opening a run or Compare. */
export const SELECTION_STORAGE_KEY = 'arlarena.runs.selected';

/** The ticked ids stored for this session (unique strings); [] on a missing or unreadable entry. */
export function loadSelection(storage: Pick<Storage, 'getItem'> | undefined): string[] {
  let raw: unknown;
  try {
    raw = JSON.parse(storage?.getItem(SELECTION_STORAGE_KEY) ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(raw)) return [];
  return [...new Set(raw.filter((x): x is string => typeof x === 'string'))];
}

export function saveSelection(storage: Pick<Storage, 'setItem'> | undefined, ids: readonly string[]): void {
  storage?.setItem(SELECTION_STORAGE_KEY, JSON.stringify(ids));
}
