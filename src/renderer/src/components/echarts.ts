/**
 * ECharts, loaded on demand as its own chunk (echartsLib.ts): the first screen and its API calls do not wait
 * for ECharts to be fetched and evaluated. A view that draws charts calls `loadEcharts()` as it is created, so
 * the chunk loads while its data is still on the way.
 */
export type EChartsModule = typeof import('echarts/core');

let loading: Promise<EChartsModule> | null = null;

export function loadEcharts(): Promise<EChartsModule> {
  loading ??= import('./echartsLib').then((m) => m.echarts);
  return loading;
}
