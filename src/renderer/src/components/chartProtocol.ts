/** Messages between the page (chartHost.ts) and the chart worker (chartWorker.ts). */
import type { MetricChartInput } from '../../lib/chartOptions';
import type { ChartReport } from './echartsSetup';
import type { PngLegendEntry } from '../../lib/chartPng';

/** CSS colours and the font family of the PNG's background, legend text and legend. */
export interface PngStyle {
  background: string;
  foreground: string;
  fontFamily: string;
}

export type PointerKind = 'mousemove' | 'mouseout' | 'mousedown' | 'mouseup' | 'click' | 'mousewheel';

export type ToWorker =
  /** `group`: charts of one group share the crosshair and zoom (ECharts connect). */
  | { t: 'init'; id: number; canvas: OffscreenCanvas; width: number; height: number; dpr: number; group?: string }
  | { t: 'set'; id: number; seq: number; input: MetricChartInput }
  | { t: 'resize'; id: number; width: number; height: number }
  /** `delta`: a wheel's zrender delta (+1 a notch away from the user); `ctrl`: the key held (zoom). */
  | { t: 'pointer'; id: number; kind: PointerKind; x: number; y: number; delta?: number; ctrl?: boolean }
  | { t: 'resetZoom'; id: number }
  /** The chart as it is drawn, as a PNG (chartPng.ts: opaque background, legend strip), answered by `png`. */
  | { t: 'png'; id: number; req: number; style: PngStyle; legend: PngLegendEntry[] }
  | { t: 'dispose'; id: number }
  /** Draw one throwaway chart now, while nothing waits for the worker (sent at idle by `preloadCharts`). */
  | { t: 'warm' };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'drawn'; id: number; seq: number }
  | { t: 'error'; id: number | null; message: string }
  | { t: 'report'; id: number; report: ChartReport }
  /** `blob` null: the chart is gone, or the canvas could not be encoded (`message` says why). */
  | { t: 'png'; id: number; req: number; blob: Blob | null; message?: string };
