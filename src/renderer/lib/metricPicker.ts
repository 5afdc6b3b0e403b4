/**
 * The metric picker's logic (run page and Compare): keys grouped by namespace — the part before the first '/',
 * as the catalog names them (src/shared/metrics.ts: `actor/grad_norm`, `episode/success_rate`) and as W&B and
 * TensorBoard group their panels — narrowed by a search, and the choice of charts remembered per view.
 */
import { currentProject } from './projectWorkspace';
import { workspaceStorage } from './dataDirWorkspace';

/** The namespace of a key: `actor` for `actor/grad_norm`; keys without one are grouped as `other`. */
export function namespaceOf(key: string): string {
  const i = key.indexOf('/');
  return i > 0 ? key.slice(0, i) : 'other';
}

export interface PickerGroup {
  readonly ns: string;
  /** The group's keys that match the search, in the order given. */
  readonly keys: readonly string[];
  /** How many of the group's keys (matching or not) are charted. */
  readonly charted: number;
  /** Every key of the group (matching or not). */
  readonly total: number;
}

/**
 * The search as a regular expression (case-insensitive), as W&B's and TensorBoard's panel filters read it: `/re/`
 * or any query that compiles; null when it does not compile (then it is only searched for as words).
 */
export function queryRegex(query: string): RegExp | null {
  const q = query.trim();
  if (q === '') return null;
  const body = q.length > 2 && q.startsWith('/') && q.endsWith('/') ? q.slice(1, -1) : q;
  try {
    return new RegExp(body, 'i');
  } catch {
    return null;
  }
}

/**
 * Whether every word of `query` is in the key or its label (case-insensitive), or the query read as a regular
 * expression matches the key or its label (`timing_s/.*gen`, `^critic/v`, `mfu|throughput`).
 */
export function matches(key: string, label: string, query: string, re: RegExp | null = queryRegex(query)): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const hay = `${key} ${label}`.toLowerCase();
  if (words.every((w) => hay.includes(w))) return true;
  return re !== null && (re.test(key) || re.test(label));
}

/**
 * The picker's groups: namespaces in the order their first key appears (the catalog's order, which puts the
 * stability dashboard's groups first), each with the keys matching `query`; groups with no match are left out.
 */
export function pickerGroups(
  keys: readonly string[],
  charted: ReadonlySet<string>,
  label: (k: string) => string,
  query = '',
): PickerGroup[] {
  const order: string[] = [];
  const all = new Map<string, string[]>();
  for (const k of new Set(keys)) {
    const ns = namespaceOf(k);
    let list = all.get(ns);
    if (!list) {
      all.set(ns, (list = []));
      order.push(ns);
    }
    list.push(k);
  }
  const out: PickerGroup[] = [];
  const re = queryRegex(query);
  for (const ns of order) {
    const list = all.get(ns)!;
    const hit = list.filter((k) => matches(k, label(k), query, re));
    if (hit.length === 0) continue;
    out.push({ ns, keys: hit, charted: list.filter((k) => charted.has(k)).length, total: list.length });
  }
  return out;
}

/** `keys` with `k` charted or not (a newly charted key goes last, after the charts already on screen). */
export function toggled(keys: readonly string[], k: string, on: boolean): string[] {
  const rest = keys.filter((x) => x !== k);
  return on ? [...rest, k] : rest;
}

/** `keys` with all of `group` charted (appended in their order) or none of them. */
export function toggledGroup(keys: readonly string[], group: readonly string[], on: boolean): string[] {
  if (on) return [...keys, ...group.filter((x) => !keys.includes(x))];
  const g = new Set(group);
  return keys.filter((x) => !g.has(x));
}

export type PickerView = 'run' | 'compare';

/** The chart choice is the project's (projectWorkspace.ts); the key without a project is the one kept before. */
const STORAGE_KEY = (view: PickerView, project: string | null = currentProject()) =>
  project === null ? `arlarena.charts.${view}` : `arlarena.charts.${view}@${project}`;
/** More than any run logs: a stored list longer than this is not ours. */
const MAX_KEYS = 500;

type KeyStore = Pick<Storage, 'getItem' | 'setItem'>;

/** The browser's storage and, once the lab answered, the data directory's workspace (dataDirWorkspace.ts). */
function storage(): KeyStore | null {
  return workspaceStorage();
}

/** The charts last chosen in this view, or null (never chosen, or unreadable). */
export function loadChartChoice(view: PickerView, store: KeyStore | null = storage()): string[] | null {
  try {
    const raw = store?.getItem(STORAGE_KEY(view)) ?? store?.getItem(STORAGE_KEY(view, null));
    if (!raw) return null;
    const v: unknown = JSON.parse(raw);
    if (!Array.isArray(v) || v.length > MAX_KEYS || !v.every((k) => typeof k === 'string' && k.length > 0 && k.length <= 200)) return null;
    return [...new Set(v as string[])];
  } catch {
    return null;
  }
}

export function saveChartChoice(view: PickerView, keys: readonly string[], store: KeyStore | null = storage()): void {
  try {
    store?.setItem(STORAGE_KEY(view), JSON.stringify(keys.slice(0, MAX_KEYS)));
  } catch {
    // Full or blocked storage: the choice holds for this visit only.
  }
}
