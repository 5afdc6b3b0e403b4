/** Messages between the page (chartHost.ts) and the chart worker (chartWorker.ts). */
import type { MetricChartInput } from '../../lib/chartOptions';

export type PointerKind = 'mousemove' | 'mouseout' | 'mousedown' | 'mouseup' | 'click';

export type ToWorker =
  | { t: 'init'; id: number; canvas: OffscreenCanvas; width: number; height: number; dpr: number }
  | { t: 'set'; id: number; seq: number; input: MetricChartInput }
  | { t: 'resize'; id: number; width: number; height: number }
  | { t: 'pointer'; id: number; kind: PointerKind; x: number; y: number }
  | { t: 'dispose'; id: number }
  /** Draw one throwaway chart now, while nothing waits for the worker (sent at idle by `preloadCharts`). */
  | { t: 'warm' };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'drawn'; id: number; seq: number }
  | { t: 'error'; id: number | null; message: string };
