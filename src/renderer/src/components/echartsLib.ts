/** ECharts for drawing in the page (echartsSetup.ts), loaded through `loadEcharts()` (echarts.ts) as its own
 * chunk: used when the chart worker is not available (chartHost.ts). */
export { draw, echarts, reportRange, resetZoom, wireChart } from './echartsSetup';
