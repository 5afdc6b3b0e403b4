/**
 * The workspace saved per project, as a W&B project keeps its workspace: a project here is one data directory
 * (`app.info` dataDir; two labs served on one address keep apart). What is kept:
 *   - the runs table: search or query, filter menus, sort, added columns — in this browser per project, and in the
 *     address (`?view=runs&q=…&sort=…&dir=…&cols=…`), so a copied link opens the same table;
 *   - Compare's smoothing, x-axis and grouping as the project's default for run sets not compared before (a run
 *     set's own workspace, its charts and hidden runs, is compareWorkspace.ts's, also in the address);
 *   - the chart choice of each view (metricPicker.ts keys it by the project).
 * Pure apart from the current project (set by Lab.init from app.info); storage is passed in. Unit-tested.
 */
import type { RunStatus } from '../../shared/api';
import type { SmoothingMode } from './smoothing';
import type { XAxisName } from './comparePrefetch';
import { cleanColumns, type RunSortKey } from './runsTable';

type KeyStore = Pick<Storage, 'getItem' | 'setItem'>;

/** A short, stable key for a data directory (32-bit FNV-1a of its path, hex): storage keys name no paths. */
export function projectKey(dataDir: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < dataDir.length; i++) {
    h ^= dataDir.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

const CURRENT_KEY = 'arlarena.project';
let current: string | null = null;

function session(): KeyStore | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage;
  } catch {
    return null;
  }
}

/** The lab's data directory is known (Lab.init): later workspaces are this project's; kept for the tab's reloads. */
export function setCurrentProject(dataDir: string, store: KeyStore | null = session()): string {
  current = projectKey(dataDir);
  try {
    store?.setItem(CURRENT_KEY, current);
  } catch {
    // Blocked storage: known for this page only.
  }
  return current;
}

/** The current project's key: known once app.info answered, or from this tab's last page; null before either. */
export function currentProject(store: KeyStore | null = session()): string | null {
  if (current !== null) return current;
  try {
    const v = store?.getItem(CURRENT_KEY) ?? null;
    return v !== null && /^[0-9a-f]{8}$/.test(v) ? v : null;
  } catch {
    return null;
  }
}

/** Tests: forget the current project. */
export function resetCurrentProject(): void {
  current = null;
}

/** The storage key of one part of a project's workspace. */
export function projectStorageKey(project: string, part: 'runs' | 'compare'): string {
  return `arlarena.project.${project}.${part}`;
}

// ─── the runs table ────────────────────────────────────────────────────────────────────────────────────────────

export interface RunsWorkspace {
  readonly search?: string;
  readonly status?: '' | 'active' | RunStatus;
  readonly env?: string;
  readonly preset?: string;
  readonly tag?: string;
  readonly sort?: RunSortKey;
  readonly dir?: 'asc' | 'desc';
  /** Added columns: headline-number keys and `config:<path>`, in the order added. */
  readonly columns?: readonly string[];
}

const STATUSES: readonly string[] = ['active', 'queued', 'running', 'paused', 'completed', 'failed', 'stopped', 'interrupted'];
const NAMED_SORTS: readonly string[] = [
  'name',
  'seed',
  'env',
  'preset',
  'status',
  'validation',
  'success',
  'step',
  'eta',
  'alerts',
  'createdAt',
];
const VALUE = /^[^\n\r]{1,200}$/;

function sortKey(v: unknown): RunSortKey | undefined {
  if (typeof v !== 'string') return undefined;
  if (NAMED_SORTS.includes(v)) return v as RunSortKey;
  return /^(summary|config):[A-Za-z0-9_./@()-]{1,200}$/.test(v) ? (v as RunSortKey) : undefined;
}

/** A workspace from untrusted fields (storage or an address): what does not fit is left out. */
function cleanRuns(raw: Record<string, unknown>): RunsWorkspace {
  const out: { -readonly [K in keyof RunsWorkspace]: RunsWorkspace[K] } = {};
  const text = (v: unknown): string | undefined => (typeof v === 'string' && VALUE.test(v) ? v : undefined);
  const search = typeof raw.search === 'string' ? raw.search.slice(0, 500) : undefined;
  if (search !== undefined && search !== '') out.search = search;
  if (typeof raw.status === 'string' && STATUSES.includes(raw.status)) out.status = raw.status as RunsWorkspace['status'];
  for (const k of ['env', 'preset', 'tag'] as const) {
    const v = text(raw[k]);
    if (v !== undefined) out[k] = v;
  }
  const sort = sortKey(raw.sort);
  if (sort) out.sort = sort;
  if (raw.dir === 'asc' || raw.dir === 'desc') out.dir = raw.dir;
  if (raw.columns !== undefined) out.columns = cleanColumns(raw.columns);
  return out;
}

/** The runs table's workspace in an address (`?view=runs&q=preset%20%3D%20sampo&sort=summary:val/score_mean&cols=…`). */
export function parseRunsWorkspace(search: string): RunsWorkspace {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const cols = q.get('cols');
  return cleanRuns({
    search: q.get('q') ?? undefined,
    status: q.get('status') ?? undefined,
    env: q.get('env') ?? undefined,
    preset: q.get('preset') ?? undefined,
    tag: q.get('tag') ?? undefined,
    sort: q.get('sort') ?? undefined,
    dir: q.get('dir') ?? undefined,
    columns: cols === null ? undefined : cols.split(',').filter((c) => c !== ''),
  });
}

/** The workspace as query parameters after `?view=runs` (`&q=…`); empty parts and the default sort are left out. */
export function runsWorkspaceQuery(ws: RunsWorkspace): string {
  const parts: string[] = [];
  const enc = (v: string) => encodeURIComponent(v).replace(/%2F/g, '/').replace(/%3A/g, ':');
  if (ws.search) parts.push(`q=${enc(ws.search)}`);
  if (ws.status) parts.push(`status=${enc(ws.status)}`);
  if (ws.env) parts.push(`env=${enc(ws.env)}`);
  if (ws.preset) parts.push(`preset=${enc(ws.preset)}`);
  if (ws.tag) parts.push(`tag=${enc(ws.tag)}`);
  if (ws.sort && !(ws.sort === 'createdAt' && (ws.dir ?? 'desc') === 'desc')) {
    parts.push(`sort=${enc(ws.sort)}`);
    if (ws.dir) parts.push(`dir=${ws.dir}`);
  }
  if (ws.columns && ws.columns.length > 0) parts.push(`cols=${ws.columns.map(enc).join(',')}`);
  return parts.length ? `&${parts.join('&')}` : '';
}

/** Whether an address names any part of the runs table's workspace (it then wins over what is saved). */
export function hasRunsWorkspace(search: string): boolean {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  return ['q', 'status', 'env', 'preset', 'tag', 'sort', 'dir', 'cols'].some((k) => q.has(k));
}

export function loadRunsWorkspace(project: string | null, store: KeyStore | null): RunsWorkspace | null {
  if (project === null) return null;
  try {
    const raw = store?.getItem(projectStorageKey(project, 'runs'));
    if (!raw) return null;
    const v: unknown = JSON.parse(raw);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? cleanRuns(v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function saveRunsWorkspace(project: string | null, ws: RunsWorkspace, store: KeyStore | null): void {
  if (project === null) return;
  try {
    store?.setItem(projectStorageKey(project, 'runs'), JSON.stringify(ws));
  } catch {
    // Full or blocked storage: the address still holds the workspace.
  }
}

// ─── Compare's defaults for the project ────────────────────────────────────────────────────────────────────────

export interface CompareDefaults {
  readonly smoothing?: SmoothingMode;
  readonly strength?: number;
  readonly xAxis?: XAxisName;
  readonly xKey?: string;
  readonly group?: string;
}

export function loadCompareDefaults(project: string | null, store: KeyStore | null): CompareDefaults | null {
  if (project === null) return null;
  try {
    const raw = store?.getItem(projectStorageKey(project, 'compare'));
    if (!raw) return null;
    const v = JSON.parse(raw) as Record<string, unknown>;
    if (v === null || typeof v !== 'object') return null;
    const out: { -readonly [K in keyof CompareDefaults]: CompareDefaults[K] } = {};
    if (v.smoothing === 'none' || v.smoothing === 'ema' || v.smoothing === 'mean') out.smoothing = v.smoothing;
    if (typeof v.strength === 'number' && v.strength >= 0 && v.strength < 1) out.strength = v.strength;
    if (v.xAxis === 'step' || v.xAxis === 'wall' || v.xAxis === 'tokens') out.xAxis = v.xAxis;
    if (typeof v.xKey === 'string' && /^[^,\s]{1,200}$/.test(v.xKey)) out.xKey = v.xKey;
    if (typeof v.group === 'string' && /^[A-Za-z0-9_.]{1,100}$/.test(v.group)) out.group = v.group;
    return out;
  } catch {
    return null;
  }
}

export function saveCompareDefaults(project: string | null, d: CompareDefaults, store: KeyStore | null): void {
  if (project === null) return;
  try {
    store?.setItem(
      projectStorageKey(project, 'compare'),
      JSON.stringify({
        smoothing: d.smoothing,
        strength: d.strength,
        xAxis: d.xAxis,
        xKey: d.xKey || undefined,
        group: d.group || undefined,
      }),
    );
  } catch {
    // Full or blocked storage.
  }
}
