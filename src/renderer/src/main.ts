/**
 * The page's entry: small on purpose. It sends what the first screen waits for longest, then loads the app
 * (boot.ts, its own chunk). Opened on Compare, the runs' data and the chart worker are requested here, in parallel with
 * the app chunk, instead of after the whole app has been fetched, evaluated and mounted (~150–250 ms later on a
 * busy 2-core machine; bench:ui). index.html preloads the app chunk, so it is fetched alongside this module
 * (electron.vite.config.ts `preloadAppChunk`). The stylesheet comes with the app chunk (boot.ts): linked from the
 * page, it held this module back until it had loaded (a stylesheet blocks scripts), and this module needs none
 * of it; it is only preloaded.
 */
import { createTransport } from '../lib/transport';
import { CHART_VIEWS, parseRoute } from '../lib/router';
import { prefetchCompare } from '../lib/comparePrefetch';
import { loadEcharts } from './components/echarts';
import { chartWorker } from './components/chartHost';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');

const api = createTransport();
const route = parseRoute(window.location.search);
if (route.view === 'compare' && route.ids.length > 0) prefetchCompare(api, route.ids);
if (CHART_VIEWS.has(route.view)) {
  // Views that open with charts: the chart worker loads ECharts while the data is on the way (without a worker,
  // the page does).
  if (!chartWorker()) void loadEcharts();
}

void import('./boot').then(({ start }) => start(target, api));
