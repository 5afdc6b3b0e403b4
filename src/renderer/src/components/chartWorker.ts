/**
 * The chart worker: ECharts draws every chart of the page here, on OffscreenCanvases the page transferred
 * (chartHost.ts), so building options, laying out axes and painting lines never occupy the page's main thread.
 * Profiled on the compare view (8 runs × 2,000 steps): ECharts was about half of the main thread's CPU before
 * the first screen, a third of it compiling ECharts' code on first use.
 *
 * Pointer events arrive as messages and are handed to zrender's handler as it would get them from the DOM;
 * the tooltip is drawn into the canvas (there is no DOM here).
 *
 * A chart's first input is first drawn as a plain-canvas frame (lib/chartPreview.ts: 10–25 ms for the first chart
 * of a cold worker at load 4, a few ms for the next) and ECharts draws it after the worker's next animation frame:
 * the first frame is on screen while ECharts runs its code for the first time.
 */
import { echarts } from './echartsSetup';
import { metricChartOption, type MetricChartInput } from '../../lib/chartOptions';
import { drawPreview } from '../../lib/chartPreview';
import type { FromWorker, ToWorker } from './chartProtocol';

type ECharts = ReturnType<typeof echarts.init>;

const scope = self as unknown as { onmessage: ((e: MessageEvent<ToWorker>) => void) | null; postMessage(m: FromWorker): void };
const charts = new Map<number, ECharts>();
/** Charts ECharts has not drawn yet, with what their first frame needs (canvas, CSS size, pixel ratio). */
const fresh = new Map<number, { canvas: OffscreenCanvas; width: number; height: number; dpr: number }>();

function post(m: FromWorker): void {
  scope.postMessage(m);
}

function handle(m: ToWorker): void {
  switch (m.t) {
    case 'init': {
      // zrender draws straight into the given canvas (its "single canvas" mode); size and pixel ratio come from
      // the page, which owns the element's layout.
      const chart = echarts.init(m.canvas as unknown as HTMLElement, undefined, { renderer: 'canvas', width: m.width, height: m.height, devicePixelRatio: m.dpr });
      charts.set(m.id, chart);
      fresh.set(m.id, { canvas: m.canvas, width: m.width, height: m.height, dpr: m.dpr });
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
    case 'resize': {
      charts.get(m.id)?.resize({ width: m.width, height: m.height });
      const f = fresh.get(m.id);
      if (f) fresh.set(m.id, { ...f, width: m.width, height: m.height });
      return;
    }
    case 'pointer':
      charts.get(m.id)?.getZr().handler.dispatch(m.kind, { zrX: m.x, zrY: m.y });
      return;
    case 'dispose':
      charts.get(m.id)?.dispose();
      charts.delete(m.id);
      pending.delete(m.id);
      fresh.delete(m.id);
      return;
  }
}

const pending = new Map<number, { seq: number; input: MetricChartInput }>();
let flushing = false;

function flush(): void {
  const work = [...pending];
  // First frames now; ECharts in the next task, so they are committed to the screen before it starts.
  const previewed: { id: number; seq: number }[] = [];
  for (const [id, { seq, input }] of work) {
    const f = fresh.get(id);
    if (!f) continue;
    fresh.delete(id);
    const ctx = f.canvas.getContext('2d');
    if (!ctx) continue;
    try {
      drawPreview(ctx, input, f.width, f.height, f.dpr);
      previewed.push({ id, seq });
    } catch (err) {
      post({ t: 'error', id, message: describe(err) });
    }
  }
  if (previewed.length > 0) {
    // A worker's canvases reach the screen with its next animation frame, not when the task that drew them ends
    // (a screenshot taken after ECharts had drawn two charts, by the worker's own log, still showed their first
    // frames). Waiting for that frame makes 'previewed' mean "on screen", and ECharts' long first draw cannot
    // hold the first frames back.
    const next = (fn: () => void) => (typeof requestAnimationFrame === 'function' ? requestAnimationFrame(fn) : setTimeout(fn, 16));
    next(() => {
      for (const p of previewed) post({ t: 'previewed', ...p });
      setTimeout(flush, 0);
    });
    return;
  }
  flushing = false;
  pending.clear();
  for (const [id, { seq, input }] of work) {
    const chart = charts.get(id);
    if (!chart) continue;
    try {
      chart.setOption(metricChartOption(input), { notMerge: true, lazyUpdate: false });
      post({ t: 'drawn', id, seq });
    } catch (err) {
      post({ t: 'error', id, message: describe(err) });
    }
  }
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
