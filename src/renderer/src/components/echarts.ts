/**
 * ECharts for drawing in the page, loaded on demand as its own chunk (echartsLib.ts). Charts draw in the chart
 * worker (chartHost.ts) where the browser has one; this is the page's fallback, so a view that draws charts
 * calls `loadEcharts()` as it is created only when `chartWorker()` is null.
 */
/** ECharts and the lab's chart wiring (crosshair sync, zoom reports), as the worker has them. */
export type EChartsModule = typeof import('./echartsLib');

let loading: Promise<EChartsModule> | null = null;

export function loadEcharts(): Promise<EChartsModule> {
  loading ??= import('./echartsLib');
  return loading;
}
