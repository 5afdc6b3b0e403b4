/**
 * The page's side of the chart worker (chartWorker.ts): one worker for every chart of the page. A Chart
 * transfers its canvas here and then sends data, sizes and pointer events; the worker answers when a chart is
 * drawn. Where there is no worker (no OffscreenCanvas, a worker that cannot start or fails), `chartWorker()`
 * answers null or the handle's `onFail` fires, and the Chart draws with ECharts in the page instead.
 */
import type { MetricChartInput } from '../../lib/chartOptions';
import type { FromWorker, PngStyle, PointerKind, ToWorker } from './chartProtocol';
import type { PngLegendEntry } from '../../lib/chartPng';
import type { ChartReport } from './echartsSetup';
import { loadEcharts } from './echarts';

export interface ChartHandle {
  /** Sends an input to draw; its number comes back in onDrawn. */
  set(input: MetricChartInput): number;
  resize(width: number, height: number): void;
  pointer(kind: PointerKind, x: number, y: number, extra?: { delta?: number; ctrl?: boolean }): void;
  /** Zooms back out to the whole x range (and the connected charts with it). */
  resetZoom(): void;
  /** The chart as drawn, as a PNG (chartPng.ts); rejects with why it could not be made. */
  png(style: PngStyle, legend: PngLegendEntry[]): Promise<Blob>;
  dispose(): void;
}

export interface ChartCallbacks {
  /** After a `set` has been drawn (a burst of sets may be drawn once, as the last one). */
  onDrawn(seq: number): void;
  /** The worker is gone (or never started): the chart must draw some other way. */
  onFail(why: string): void;
  /** The hovered x and the x range in view changed (crosshair and zoom). */
  onReport(report: ChartReport): void;
}

interface Host {
  attach(canvas: HTMLCanvasElement, width: number, height: number, cb: ChartCallbacks, group?: string): ChartHandle;
  /** Asks the worker to draw a throwaway chart, so the first real one is drawn with compiled code. */
  warm(): void;
}

let host: Host | null | undefined;

/** How long the worker may take to load (ECharts is ~0.5 MB of script to compile on a busy 2-core machine). */
const READY_TIMEOUT_MS = 10_000;

/** Whether this page can hand canvases to a worker at all. */
function supported(): boolean {
  return (
    typeof Worker === 'function' &&
    typeof OffscreenCanvas === 'function' &&
    typeof HTMLCanvasElement !== 'undefined' &&
    'transferControlToOffscreen' in HTMLCanvasElement.prototype
  );
}

function createHost(): Host | null {
  let worker: Worker;
  try {
    worker = new Worker(new URL('./chartWorker.ts', import.meta.url), { name: 'charts' });
  } catch (e) {
    console.warn('[arlarena] charts draw in the page: the chart worker could not start', e);
    return null;
  }
  const charts = new Map<number, ChartCallbacks>();
  let nextId = 1;
  /** PNG requests waiting for the worker, by request number. */
  const pngs = new Map<number, { resolve: (b: Blob) => void; reject: (e: Error) => void }>();
  let nextReq = 1;
  let failed: string | null = null;

  const fail = (why: string) => {
    if (failed) return;
    failed = why;
    console.warn(`[arlarena] charts draw in the page from now on: ${why}`);
    host = null;
    worker.terminate();
    for (const cb of charts.values()) cb.onFail(why);
    charts.clear();
    for (const p of pngs.values()) p.reject(new Error(why));
    pngs.clear();
  };
  worker.onerror = (e) => fail(`the chart worker failed (${e.message || 'it could not be loaded'})`);
  worker.onmessageerror = () => fail('a message from the chart worker could not be read');
  // A worker that neither loads nor fails (seen with some custom URL schemes) must not leave charts blank.
  const notReady = setTimeout(() => fail(`the chart worker did not start within ${READY_TIMEOUT_MS / 1000} s`), READY_TIMEOUT_MS);
  worker.onmessage = (e: MessageEvent<FromWorker>) => {
    const m = e.data;
    if (m.t === 'ready') clearTimeout(notReady);
    else if (m.t === 'drawn') charts.get(m.id)?.onDrawn(m.seq);
    else if (m.t === 'report') charts.get(m.id)?.onReport(m.report);
    else if (m.t === 'png') {
      const p = pngs.get(m.req);
      pngs.delete(m.req);
      if (m.blob) p?.resolve(m.blob);
      else p?.reject(new Error(m.message ?? 'the chart could not be saved as PNG'));
    } else if (m.t === 'error') console.error(`[arlarena] chart worker${m.id === null ? '' : ` (chart ${m.id})`}: ${m.message}`);
  };
  const send = (m: ToWorker, transfer: Transferable[] = []) => {
    if (!failed) worker.postMessage(m, transfer);
  };

  return {
    warm: () => send({ t: 'warm' }),
    attach(canvas, width, height, cb, group) {
      const id = nextId++;
      if (failed) {
        queueMicrotask(() => cb.onFail(failed ?? 'the chart worker failed'));
        return {
          set: () => 0,
          resize() {},
          pointer() {},
          resetZoom() {},
          png: () => Promise.reject(new Error(failed ?? 'the chart worker failed')),
          dispose() {},
        };
      }
      charts.set(id, cb);
      let seq = 0;
      const off = canvas.transferControlToOffscreen();
      send({ t: 'init', id, canvas: off, width, height, dpr: window.devicePixelRatio || 1, group }, [off]);
      return {
        set: (input) => {
          seq++;
          try {
            send({ t: 'set', id, seq, input });
          } catch (e) {
            // Not cloneable (e.g. a reactive proxy in the input): this chart draws in the page.
            charts.delete(id);
            send({ t: 'dispose', id });
            cb.onFail(`its data could not be sent to the chart worker (${e instanceof Error ? e.message : String(e)})`);
          }
          return seq;
        },
        resize: (w, h) => send({ t: 'resize', id, width: w, height: h }),
        pointer: (kind, x, y, extra) => send({ t: 'pointer', id, kind, x, y, ...extra }),
        resetZoom: () => send({ t: 'resetZoom', id }),
        png: (style, legend) =>
          new Promise<Blob>((resolve, reject) => {
            if (failed) return reject(new Error(failed));
            const req = nextReq++;
            pngs.set(req, { resolve, reject });
            send({ t: 'png', id, req, style, legend });
          }),
        dispose: () => {
          charts.delete(id);
          send({ t: 'dispose', id });
        },
      };
    },
  };
}

/**
 * The page's chart worker, started on first use (main.ts starts it early on views that open with charts, so
 * it loads ECharts while the data is on the way); null where charts must draw in the page.
 */
export function chartWorker(): Host | null {
  if (host === undefined) host = supported() ? createHost() : null;
  return host;
}

/**
 * Gets charts ready before a view needs them: starts the chart worker and has it draw a throwaway chart, or,
 * without a worker, loads ECharts into the page. The app calls it once the first screen is idle, when that
 * screen has no charts (the runs table): a cold worker took ≈0.3 s to load ECharts and ≈0.1 s more for its
 * first chart, which the Compare or run view opened from there would otherwise wait for (bench:ui, in-app).
 */
export function preloadCharts(): void {
  const h = chartWorker();
  if (h) h.warm();
  else void loadEcharts();
}
