/**
 * ECharts for drawing in the page, loaded on demand as its own chunk (echartsLib.ts). Charts draw in the chart
 * worker (chartHost.ts) where the browser has one; this is the page's fallback, so a view that draws charts
 * calls `loadEcharts()` as it is created only when `chartWorker()` is null.
 */
export type EChartsModule = typeof import('echarts/core');

let loading: Promise<EChartsModule> | null = null;

export function loadEcharts(): Promise<EChartsModule> {
  loading ??= import('./echartsLib').then((m) => m.echarts);
  return loading;
}
