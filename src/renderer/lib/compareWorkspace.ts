/**
 * Compare's workspace in its address, as a W&B workspace link reopens the same view: the charts, smoothing,
 * x-axis, grouping and the runs (or groups) hidden from the legend, after the route's `view`, `runs` and `group`
 * (lib/router.ts). Pure: parsed from and written into a query string, unit-tested.
 *
 *   ?view=compare&runs=a,b&group=preset&metrics=val/score_mean,actor/entropy&smooth=ema:0.8&x=tokens&hide=b
 *     &pc=algorithm.policyLoss.mode,optim.lr&pcy=val/success_rate   (the parallel-coordinates panel's axes and metric)
 */
import type { SmoothingMode } from './smoothing';
import type { XAxisName } from './comparePrefetch';

export interface CompareWorkspace {
  readonly metrics?: readonly string[];
  readonly smoothing?: SmoothingMode;
  /** Smoothing strength in [0, 1). */
  readonly strength?: number;
  readonly xAxis?: XAxisName;
  /** Any logged key as the x-axis (wins over xAxis). */
  readonly xKey?: string;
  /** Legend entries hidden: run ids, or group values when grouping. */
  readonly hidden?: readonly string[];
  /** The parallel-coordinates panel's config axes and its headline number (lib/parallelPanel.ts). */
  readonly parallel?: { readonly keys?: readonly string[]; readonly metric?: string };
}

/** A metric key as stored (any logged key: `val-core/openai/gsm8k/reward/mean@1`, `actor/lr(1e-4)`). */
const KEY = /^[^,\s]{1,200}$/;
const MAX_KEYS = 64;
const SMOOTHING: readonly SmoothingMode[] = ['none', 'ema', 'mean'];
const X_AXES: readonly XAxisName[] = ['step', 'wall', 'tokens'];

export function parseWorkspace(search: string): CompareWorkspace {
  const q = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const out: { -readonly [K in keyof CompareWorkspace]: CompareWorkspace[K] } = {};
  const metrics = q.get('metrics');
  if (metrics !== null) out.metrics = [...new Set(metrics.split(',').filter((k) => KEY.test(k)))].slice(0, MAX_KEYS);
  const smooth = q.get('smooth');
  if (smooth !== null) {
    const [mode, strength] = smooth.split(':');
    if ((SMOOTHING as readonly string[]).includes(mode)) out.smoothing = mode as SmoothingMode;
    const s = Number(strength);
    if (strength !== undefined && Number.isFinite(s) && s >= 0 && s < 1) out.strength = s;
  }
  const x = q.get('x');
  if (x !== null && (X_AXES as readonly string[]).includes(x)) out.xAxis = x as XAxisName;
  const xKey = q.get('xkey');
  if (xKey !== null && KEY.test(xKey)) out.xKey = xKey;
  const hide = q.get('hide');
  if (hide !== null) out.hidden = [...new Set(hide.split(',').filter((k) => KEY.test(k)))].slice(0, MAX_KEYS);
  const pc = q.get('pc');
  const pcy = q.get('pcy');
  if (pc !== null || (pcy !== null && KEY.test(pcy)))
    out.parallel = {
      ...(pc !== null ? { keys: [...new Set(pc.split(',').filter((k) => KEY.test(k)))].slice(0, MAX_KEYS) } : {}),
      ...(pcy !== null && KEY.test(pcy) ? { metric: pcy } : {}),
    };
  return out;
}

/** The workspace as query parameters to append to the route (`&metrics=…`); defaults are left out. */
export function workspaceQuery(ws: CompareWorkspace): string {
  const parts: string[] = [];
  const list = (xs: readonly string[]) => xs.map((k) => encodeURIComponent(k).replace(/%2F/g, '/')).join(',');
  if (ws.metrics !== undefined) parts.push(`metrics=${list(ws.metrics)}`);
  if (ws.smoothing !== undefined && ws.smoothing !== 'none') parts.push(`smooth=${ws.smoothing}:${ws.strength ?? 0.6}`);
  if (ws.xAxis !== undefined && ws.xAxis !== 'step') parts.push(`x=${ws.xAxis}`);
  if (ws.xKey) parts.push(`xkey=${list([ws.xKey])}`);
  if (ws.hidden !== undefined && ws.hidden.length > 0) parts.push(`hide=${list(ws.hidden)}`);
  if (ws.parallel?.keys !== undefined) parts.push(`pc=${list(ws.parallel.keys)}`);
  if (ws.parallel?.metric) parts.push(`pcy=${list([ws.parallel.metric])}`);
  return parts.length ? `&${parts.join('&')}` : '';
}

/**
 * Logged keys worth offering as an x-axis: counters that grow with training (epochs, global steps, tokens or
 * samples seen, elapsed time), not per-step timings, rates or counts (verl's perf/total_num_tokens is per step).
 * The chart then draws against the key's value.
 */
export function xKeyCandidates(logged: readonly string[]): string[] {
  return logged.filter(
    (k) =>
      /epoch|global_step|total_tokens|tokens_seen|samples_seen|wall|elapsed/i.test(k) &&
      !/timing|per_token|_ms$|throughput|mfu|per_s/i.test(k),
  );
}

/** What a saved workspace holds: the address's workspace and its grouping. */
export interface SavedWorkspace extends CompareWorkspace {
  readonly group?: string;
}

type WsStore = Pick<Storage, 'getItem' | 'setItem'>;

/** The storage key of a set of runs' workspace (order-free: the same runs in another order are the same set). */
export function workspaceStorageKey(ids: readonly string[]): string {
  return `arlarena.compare.ws:${[...new Set(ids)].sort().join(',')}`;
}

/**
 * The workspace last used on these runs (this browser's storage), so Compare reopened on them without a link
 * comes back as it was left: charts, smoothing, x-axis, grouping, hidden runs. Null when none or unreadable.
 */
export function loadSavedWorkspace(ids: readonly string[], store: WsStore | null): SavedWorkspace | null {
  try {
    const raw = store?.getItem(workspaceStorageKey(ids));
    if (!raw) return null;
    const v = JSON.parse(raw) as { q?: unknown; group?: unknown };
    if (typeof v.q !== 'string') return null;
    const ws = parseWorkspace(v.q);
    return typeof v.group === 'string' && /^[A-Za-z0-9_.]{1,100}$/.test(v.group) ? { ...ws, group: v.group } : ws;
  } catch {
    return null;
  }
}

export function saveWorkspace(ids: readonly string[], ws: SavedWorkspace, store: WsStore | null): void {
  try {
    store?.setItem(workspaceStorageKey(ids), JSON.stringify({ q: workspaceQuery(ws), group: ws.group ?? '' }));
  } catch {
    // Full or blocked storage: the address still holds the workspace.
  }
}
