/**
 * The chart worker: ECharts draws every chart of the page here, on OffscreenCanvases the page transferred
 * (chartHost.ts), so building options, laying out axes and painting lines never occupy the page's main thread.
 * Profiled on the compare view (8 runs × 2,000 steps): ECharts was about half of the main thread's CPU before
 * the first screen, a third of it compiling ECharts' code on first use.
 *
 * Pointer events arrive as messages and are handed to zrender's handler as it would get them from the DOM;
 * the tooltip is drawn into the canvas (there is no DOM here).
 */
import { draw, echarts, hovering, reportRange, resetZoom, wireChart, type ChartReport } from './echartsSetup';
import { metricChartOption, type MetricChartInput } from '../../lib/chartOptions';
import type { FromWorker, PngStyle, ToWorker } from './chartProtocol';
import { composeChartPng, layoutLegend, legendFont, type PngLegendEntry } from '../../lib/chartPng';

type ECharts = ReturnType<typeof echarts.init>;

const scope = self as unknown as { onmessage: ((e: MessageEvent<ToWorker>) => void) | null; postMessage(m: FromWorker): void };
const charts = new Map<number, ECharts>();
/** Each chart's canvas and pixel ratio, for its PNG. */
const canvases = new Map<number, OffscreenCanvas>();
const dprs = new Map<number, number>();

function post(m: FromWorker): void {
  scope.postMessage(m);
}

function handle(m: ToWorker): void {
  switch (m.t) {
    case 'init': {
      // zrender draws straight into the given canvas (its "single canvas" mode); size and pixel ratio come from
      // the page, which owns the element's layout.
      const chart = echarts.init(m.canvas as unknown as HTMLElement, undefined, {
        renderer: 'canvas',
        width: m.width,
        height: m.height,
        devicePixelRatio: m.dpr,
      });
      charts.set(m.id, chart);
      canvases.set(m.id, m.canvas);
      dprs.set(m.id, m.dpr);
      // Every chart of the page lives in this worker, so ECharts' connect syncs a view's crosshair here.
      wireChart(chart, m.group, reporter(m.id));
      return;
    }
    case 'set':
      // Drawn from a later task, only the latest input of each chart: a live run detail sends all its charts'
      // data at every step, and a burst must not queue one full redraw per message.
      pending.set(m.id, { seq: m.seq, input: m.input });
      if (!flushing) {
        flushing = true;
        setTimeout(flush, 0);
      }
      return;
    case 'resize':
      charts.get(m.id)?.resize({ width: m.width, height: m.height });
      return;
    case 'pointer': {
      const chart = charts.get(m.id);
      if (!chart) return;
      if (m.kind === 'mousemove') hovering(chart);
      // zrender reads the DOM event's modifier keys and calls preventDefault on it (roam controller): a stand-in.
      chart.getZr().handler.dispatch(m.kind, {
        zrX: m.x,
        zrY: m.y,
        zrDelta: m.delta,
        ctrlKey: m.ctrl === true,
        preventDefault() {},
        stopPropagation() {},
      });
      return;
    }
    case 'resetZoom': {
      const chart = charts.get(m.id);
      if (chart) resetZoom(chart);
      return;
    }
    case 'png':
      void png(m.id, m.req, m.style, m.legend);
      return;
    case 'dispose':
      charts.get(m.id)?.dispose();
      charts.delete(m.id);
      canvases.delete(m.id);
      dprs.delete(m.id);
      pending.delete(m.id);
      return;
    case 'warm':
      // Only while no real chart exists: once one does, its own draws have done the warming, and a throwaway
      // draw would only delay them.
      if (!warmed && charts.size === 0 && pending.size === 0) warmUp();
      return;
  }
}

/** The chart's canvas as drawn, with its background and legend (chartPng.ts), encoded as a PNG. */
async function png(id: number, req: number, style: PngStyle, legend: PngLegendEntry[]): Promise<void> {
  const src = canvases.get(id);
  if (!src) return post({ t: 'png', id, req, blob: null, message: 'the chart is no longer on the page' });
  try {
    const dpr = dprs.get(id) ?? 1;
    const measure = new OffscreenCanvas(1, 1).getContext('2d');
    if (!measure) throw new Error('no 2D context to measure the legend');
    measure.font = legendFont(dpr, style.fontFamily);
    const layout = layoutLegend(legend, src.width, dpr, (t) => measure.measureText(t).width);
    const out = new OffscreenCanvas(src.width, src.height + layout.height);
    const ctx = out.getContext('2d');
    if (!ctx) throw new Error('no 2D context for the image');
    composeChartPng(ctx, src, { width: src.width, height: src.height }, layout, { ...style, dpr });
    post({ t: 'png', id, req, blob: await out.convertToBlob({ type: 'image/png' }) });
  } catch (err) {
    post({ t: 'png', id, req, blob: null, message: describe(err) });
  }
}

let warmed = false;

/**
 * One throwaway chart shaped like a compare chart (8 runs, raw and smoothed lines, an alert span, a non-finite
 * marker), drawn on a canvas of its own and disposed. The first chart a fresh worker draws costs several times
 * what the next ones do (bench:ui: ≈100 ms against ≈25 ms), because ECharts' code is compiled on first use;
 * drawn at idle, that cost is paid before the user opens a view with charts.
 */
function warmUp(): void {
  warmed = true;
  const x = Array.from({ length: 300 }, (_, i) => i * 7);
  const lines = Array.from({ length: 8 }, (_, k) => {
    const y = x.map((v) => Math.sin(v / 90 + k));
    return {
      name: `run ${k + 1}`,
      color: '#4e79a7',
      x,
      y,
      smoothed: y.map((v) => v * 0.9),
      nonFinite: k === 0 ? [{ x: 700, step: 700, value: 'NaN' }] : [],
    };
  });
  const canvas = new OffscreenCanvas(600, 240);
  const chart = echarts.init(canvas as unknown as HTMLElement, undefined, {
    renderer: 'canvas',
    width: 600,
    height: 240,
    devicePixelRatio: 1,
  });
  chart.setOption(
    metricChartOption({
      title: 'warm-up',
      unit: '',
      xName: 'step',
      lines,
      alerts: [{ x: 900, xEnd: 1200, label: 'alert', severity: 'warning' }],
      theme: { dark: false },
    }),
    { notMerge: true, lazyUpdate: false },
  );
  chart.dispose();
}

const pending = new Map<number, { seq: number; input: MetricChartInput }>();
let flushing = false;

function flush(): void {
  flushing = false;
  const work = [...pending];
  pending.clear();
  for (const [id, { seq, input }] of work) {
    const chart = charts.get(id);
    if (!chart) continue;
    try {
      draw(chart, metricChartOption(input), input.zoom?.id);
      post({ t: 'drawn', id, seq });
      reportRange(chart, reporter(id));
    } catch (err) {
      post({ t: 'error', id, message: describe(err) });
    }
  }
}

function reporter(id: number): (r: ChartReport) => void {
  return (report) => post({ t: 'report', id, report });
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.message}${err.stack ? `\n${err.stack}` : ''}` : String(err);
}

scope.onmessage = (e) => {
  try {
    handle(e.data);
  } catch (err) {
    post({ t: 'error', id: 'id' in e.data ? e.data.id : null, message: describe(err) });
  }
};

post({ t: 'ready' });
