/**
 * ECharts with only the parts the lab uses (tree-shaken: `echarts/core`, see notes/stack.md), set up the same
 * way in the page (echartsLib.ts, the fallback) and in the chart worker (chartWorker.ts).
 */
import * as echarts from 'echarts/core';
import { LineChart, ParallelChart, ScatterChart } from 'echarts/charts';
import {
  DataZoomInsideComponent,
  GridComponent,
  MarkAreaComponent,
  MarkLineComponent,
  ParallelComponent,
  TitleComponent,
  TooltipComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  LineChart,
  ScatterChart,
  // Compare's parallel-coordinates panel (parallelPanel.ts).
  ParallelChart,
  ParallelComponent,
  GridComponent,
  TooltipComponent,
  TitleComponent,
  MarkLineComponent,
  MarkAreaComponent,
  DataZoomInsideComponent,
  CanvasRenderer,
]);

/**
 * What a chart reports to its component (Chart.svelte) for the crosshair and zoom: the hovered x (null when the
 * pointer left; charts of one connected group all report the same x) and the x range now in view.
 */
export interface ChartReport {
  hover?: number | null;
  range?: { from: number; to: number; zoomed: boolean };
  /** The y-axis scale drawn ('log' once the log toggle is on). */
  yScale?: string;
}

type Instance = ReturnType<typeof echarts.init>;

type Model = {
  getComponent(
    t: string,
    i: number,
  ): { axis?: { scale: { type: string; getExtent(): [number, number] } }; option?: { start?: number; end?: number } } | undefined;
};

/**
 * The chart's model (ECharts' internal getter; undefined before the first setOption). Read instead of
 * getOption(), which deep-clones every series' data: too costly on each live redraw of a 10-chart view.
 */
function model(chart: Instance): Model | undefined {
  return (chart as unknown as { getModel(): Model | undefined }).getModel();
}

/** The x-axis extent now drawn (after a zoom, the zoom window). ECharts has no public getter for it. */
function xExtent(chart: Instance): [number, number] | null {
  return model(chart)?.getComponent('xAxis', 0)?.axis?.scale.getExtent() ?? null;
}

/** The inside zoom's window in percent of the whole range, or null when it shows everything. */
function zoomWindow(chart: Instance): { start: number; end: number } | null {
  const o = model(chart)?.getComponent('dataZoom', 0)?.option;
  if (!o) return null;
  const start = o.start ?? 0;
  const end = o.end ?? 100;
  return start > 0.001 || end < 99.999 ? { start, end } : null;
}

/** The charts of each connected group, and the one under the pointer (the only one whose tooltip box shows). */
const members = new Map<string, Set<Instance>>();
const active = new Map<string, Instance>();
const reporters = new WeakMap<Instance, (r: ChartReport) => void>();

/**
 * Makes `chart` the group's hovered chart: its tooltip box shows, the others keep only the crosshair line at
 * the same x. Ten synced tooltip boxes covered half of every chart (bench screenshots), so only the chart under
 * the pointer names the values, as W&B does.
 */
function activate(chart: Instance, group: string): void {
  if (active.get(group) === chart) return;
  active.set(group, chart);
  const set = members.get(group);
  if (!set) return;
  for (const c of [...set]) {
    if (c.isDisposed()) set.delete(c);
    else c.setOption({ tooltip: { showContent: c === chart } }, { lazyUpdate: false });
  }
}

/**
 * Wires a chart for the crosshair sync and the reports, the same in the worker and in the page: charts of one
 * `group` are connected (ECharts `connect`: hovering one moves the axis pointer of all, and a zoom zooms all),
 * and the hovered x and the visible range go to `report`.
 */
export function wireChart(chart: Instance, group: string | undefined, report: (r: ChartReport) => void): void {
  if (group) {
    chart.group = group;
    echarts.connect(group);
    let set = members.get(group);
    if (!set) members.set(group, (set = new Set()));
    set.add(chart);
    // The group's hovered chart must be known before ECharts handles the move: connect hands the move to the
    // other charts inside that same call, and their reports read `active`. Set only after it (a zrender listener),
    // a single move onto another chart was reported with the previously hovered chart's x, or each chart's own
    // (e2e ui-charts, the crosshair after a zoom reset). In the page the container's capture listeners run before
    // zrender's; in the worker the host calls `hovering` before dispatching the move.
    const dom = chart.getDom() as unknown as EventTarget | undefined;
    if (typeof HTMLElement !== 'undefined' && dom instanceof HTMLElement) {
      const onMove = (): void => {
        if (!chart.isDisposed()) activate(chart, group);
      };
      for (const kind of ['pointermove', 'mousemove']) dom.addEventListener(kind, onMove, { capture: true });
    }
    chart.getZr().on('mousemove', () => activate(chart, group));
  }
  reporters.set(chart, report);
  chart.on('updateAxisPointer', (e: unknown) => {
    const info = (e as { axesInfo?: { axisDim: string; value: number }[] }).axesInfo ?? [];
    const x = info.find((a) => a.axisDim === 'x');
    const hover = x ? Number(x.value) : null;
    // ECharts' connect hands the other charts the pointer's pixel, and each turns it into an x of its own: a chart
    // whose axis extent differs by a step (a metric first logged at step 1) names a neighbouring step. The x under
    // the pointer is the hovered chart's, so that chart reports it for the whole group.
    const source = group ? active.get(group) : undefined;
    if (!group || !source || source.isDisposed()) {
      report({ hover });
      return;
    }
    if (source !== chart) return;
    for (const c of members.get(group) ?? []) if (!c.isDisposed()) reporters.get(c)?.({ hover });
  });
  chart.on('datazoom', () => reportRange(chart, report));
}

/** The pointer moves over `chart`: it becomes its group's hovered chart (called before the move is dispatched). */
export function hovering(chart: Instance): void {
  if (chart.group) activate(chart, chart.group);
}

/** Reports the x range in view (after a zoom, or a setOption, which draws synchronously with lazyUpdate off). */
export function reportRange(chart: Instance, report: (r: ChartReport) => void): void {
  const ext = xExtent(chart);
  if (ext)
    report({
      range: { from: ext[0], to: ext[1], zoomed: zoomWindow(chart) !== null },
      yScale: model(chart)?.getComponent('yAxis', 0)?.axis?.scale.type,
    });
}

/** Per chart, the id of the last zoom request (MetricChartInput.zoom) applied. */
const zoomsApplied = new WeakMap<Instance, string>();

/**
 * Draws a new option, keeping the user's zoom: a live run redraws every chart at every step (notMerge, so
 * series that went away do not linger), which would otherwise zoom back out each time. A zoom the input asks
 * for (`zoomId`: an alert link's window) is applied once; after that the user's zoom or reset stands.
 */
export function draw(chart: Instance, option: Record<string, unknown>, zoomId?: string): void {
  const win = zoomWindow(chart);
  const zoom = Array.isArray(option.dataZoom) ? (option.dataZoom as Record<string, unknown>[]) : null;
  const fresh = zoomId !== undefined && zoomsApplied.get(chart) !== zoomId;
  if (fresh) zoomsApplied.set(chart, zoomId);
  else if (zoom?.[0]) {
    const { startValue: _s, endValue: _e, ...rest } = zoom[0];
    zoom[0] = win ? { ...rest, ...win } : rest;
  }
  const hovered = chart.group ? active.get(chart.group) : undefined;
  if (hovered && hovered !== chart && option.tooltip && typeof option.tooltip === 'object')
    option.tooltip = { ...option.tooltip, showContent: false };
  chart.setOption(option, { notMerge: true, lazyUpdate: false });
}

/** Zooms a chart (and its connected group) back out to the whole x range. */
export function resetZoom(chart: Instance): void {
  chart.dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
}

export { echarts };
