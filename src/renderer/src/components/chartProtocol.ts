/** Messages between the page (chartHost.ts) and the chart worker (chartWorker.ts). */
import type { MetricChartInput } from '../../lib/chartOptions';

export type PointerKind = 'mousemove' | 'mouseout' | 'mousedown' | 'mouseup' | 'click';

export type ToWorker =
  | { t: 'init'; id: number; canvas: OffscreenCanvas; width: number; height: number; dpr: number }
  | { t: 'set'; id: number; seq: number; input: MetricChartInput }
  | { t: 'resize'; id: number; width: number; height: number }
  | { t: 'pointer'; id: number; kind: PointerKind; x: number; y: number }
  | { t: 'dispose'; id: number };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'drawn'; id: number; seq: number }
  | { t: 'error'; id: number | null; message: string };
