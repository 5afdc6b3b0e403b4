/**
 * The compare view's first requests, and starting them before the app is loaded. Plain TypeScript without
 * Svelte, so the page's small entry module (src/main.ts) can send them while the app chunk is still loading.
 */
import type { ApiInput, ApiOutput, ArlArenaApi } from '../../shared/api';
import type { Result } from '../../shared/result';
import { BREAKING_KEYS, DEFAULT_CHART_KEYS } from './metricKeys';
import { TRAIN_SUCCESS_KEYS } from '../../shared/headline';
import { loadChartChoice } from './metricPicker';
import { uniq } from './collections';

/** Points per series requested from the store (LTTB keeps spikes); plenty for a chart a few hundred px wide. */
export const COMPARE_MAX_POINTS = 300;
/** Charts fetched in the first request (about one screen). */
export const FIRST_SCREEN_CHARTS = 4;

export type XAxisName = 'step' | 'wall' | 'tokens';

export interface FirstRequests {
  readonly many: ApiInput<'runs.getMany'>;
  readonly metrics: ApiInput<'runs.metrics'>;
}

export interface StartedRequests {
  readonly many: Promise<Result<ApiOutput<'runs.getMany'>>>;
  readonly metrics: Promise<Result<ApiOutput<'runs.metrics'>>>;
}

/** Every record, and the first screen's metrics plus what the summary needs (success or score, breakage keys). */
export function firstRequests(ids: readonly string[], chartKeys: readonly string[], xAxis: XAxisName): FirstRequests {
  const keys = uniq([...chartKeys.slice(0, FIRST_SCREEN_CHARTS), ...TRAIN_SUCCESS_KEYS, ...BREAKING_KEYS]);
  return { many: { runIds: [...ids] }, metrics: { runIds: [...ids], keys, xAxis, maxPoints: COMPARE_MAX_POINTS } };
}

let early: { sig: string; started: StartedRequests } | null = null;

/** A call that never throws synchronously (a transport that throws gives a rejected promise instead). */
function start<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call();
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * Sends a compare view's first requests now, with the view's defaults (metrics, x-axis). src/main.ts calls it
 * when the page opens on Compare, before the app chunk is loaded and mounted: the first screen waits longest for
 * the server's answer, and loading and mounting the app takes ~100–250 ms of a busy machine first.
 */
export function prefetchCompare(api: ArlArenaApi, ids: readonly string[]): void {
  if (ids.length === 0) return;
  // The charts Compare will ask for: the ones last chosen there, else the defaults (CompareState's rule).
  const req = firstRequests(ids, loadChartChoice('compare') ?? DEFAULT_CHART_KEYS, 'step');
  const started = { many: start(() => api.call('runs.getMany', req.many)), metrics: start(() => api.call('runs.metrics', req.metrics)) };
  // Lab.settle reports a failure once the view adopts the request; until then a rejection is not "unhandled".
  started.many.catch(() => undefined);
  started.metrics.catch(() => undefined);
  early = { sig: JSON.stringify(req), started };
}

/** The prefetched requests if they are exactly `req` (taken once), else null (and any others are dropped). */
export function takePrefetched(req: FirstRequests): StartedRequests | null {
  const hit = early !== null && early.sig === JSON.stringify(req) ? early.started : null;
  early = null;
  return hit;
}
