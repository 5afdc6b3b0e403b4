/**
 * ECharts option builders, pure so they can be tested without a DOM. The views hand the Chart component a
 * MetricChartInput (plain data, so it can be posted to the chart worker); the option is built where ECharts
 * runs (src/renderer/src/components/chartWorker.ts, or the page when there is no worker).
 *
 * Conventions: raw data is drawn faintly behind smoothed curves; non-finite values (null in the data) are
 * drawn as red triangles on the x-axis at their step, never silently dropped; alerts are vertical mark lines
 * at their first step with a shaded span to their last step.
 */
export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

export interface ChartTheme {
  readonly dark: boolean;
}

export interface LineInput {
  readonly name: string;
  readonly color: string;
  readonly x: readonly number[];
  /** Raw values (null = non-finite). */
  readonly y: readonly (number | null)[];
  /** Smoothed values, or null when smoothing is off. */
  readonly smoothed: readonly (number | null)[] | null;
  /** Non-finite points at their x position, with which value they were. */
  readonly nonFinite: readonly { x: number; step: number; value: string }[];
  /** A metric that is legitimately absent on most steps (e.g. validation): connect the finite points. */
  readonly sparse?: boolean;
  /** Draw without emphasis (e.g. individual runs behind their group's band). */
  readonly faint?: boolean;
}

export interface BandInput {
  readonly name: string;
  readonly color: string;
  readonly x: readonly number[];
  readonly mean: readonly number[];
  readonly lo: readonly number[];
  readonly hi: readonly number[];
  readonly n: readonly number[];
}

export interface AlertMark {
  readonly x: number;
  readonly xEnd: number;
  readonly label: string;
  readonly severity: 'info' | 'warning' | 'critical';
}

export interface MetricChartInput {
  readonly title: string;
  readonly unit: string;
  readonly xName: string;
  readonly lines: readonly LineInput[];
  readonly bands?: readonly BandInput[];
  readonly alerts?: readonly AlertMark[];
  readonly theme: ChartTheme;
  /** Log-scale y (for gradient norms spanning decades): values ≤ 0 are left out, and the subtitle says how many. */
  readonly logY?: boolean;
  /** What the x-axis counts, for the tooltip's "step 171" header (default: from xName). */
  readonly xKind?: XKind;
}

export type XKind = 'step' | 'wall' | 'tokens';

export function xKindOf(input: Pick<MetricChartInput, 'xKind' | 'xName'>): XKind {
  if (input.xKind) return input.xKind;
  return input.xName.startsWith('wall') ? 'wall' : input.xName.startsWith('token') ? 'tokens' : 'step';
}

/**
 * The hovered x as the tooltip's header and the crosshair's report: "step 171" (steps are integers; the axis
 * pointer's own label would say "171.00"), wall time as h/min/s, tokens with digit grouping.
 */
export function xValueLabel(kind: XKind, v: number): string {
  if (!Number.isFinite(v)) return '—';
  if (kind === 'step') return `step ${Math.round(v)}`;
  if (kind === 'tokens') return `${Math.round(v).toLocaleString('en-US')} tokens`;
  const s = Math.max(0, v);
  if (s < 60) return `${Number(s.toFixed(1))} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = Math.round(s % 60);
  return h > 0 ? `${h} h ${m} min` : `${m} min ${sec} s`;
}

/** Values a log axis cannot show (≤ 0) become gaps; `dropped` counts them. */
function positiveOnly(y: readonly (number | null)[], counter: { dropped: number }): (number | null)[] {
  const out: (number | null)[] = new Array(y.length);
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (v !== null && v <= 0) {
      out[i] = null;
      counter.dropped++;
    } else out[i] = v ?? null;
  }
  return out;
}

/** A chart's input as drawn on a log y-axis: non-positive raw values, smoothed values and band edges dropped. */
export function forLogAxis(input: MetricChartInput): { input: MetricChartInput; dropped: number } {
  const raw = { dropped: 0 };
  const scratch = { dropped: 0 };
  const lines = input.lines.map((l) => ({ ...l, y: positiveOnly(l.y, raw), smoothed: l.smoothed ? positiveOnly(l.smoothed, scratch) : null }));
  const bands = input.bands?.map((b) => {
    const keep = b.x.map((_, i) => b.lo[i] > 0 && b.mean[i] > 0);
    const pick = <T>(a: readonly T[]) => a.filter((_, i) => keep[i]);
    return { ...b, x: pick(b.x), mean: pick(b.mean), lo: pick(b.lo), hi: pick(b.hi), n: pick(b.n) };
  });
  return { input: { ...input, lines, bands }, dropped: raw.dropped };
}

/** Below this many points a line also shows its points. */
export const FEW_POINTS = 30;

/** Axis tick labels: short, no 0.00000105-style strings. */
export function axisLabel(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
}

const SEVERITY_COLOR = { info: '#4e79a7', warning: '#f28e2b', critical: '#d62728' } as const;

function pairs(x: readonly number[], y: readonly (number | null)[]): (number | null)[][] {
  const out: (number | null)[][] = new Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = [x[i], y[i] ?? null];
  return out;
}

/**
 * A line's points as one flat typed array [x0, y0, x1, y1, …] with NaN for non-finite (a gap, as null is).
 * ECharts deep-clones plain array data on every setOption but takes typed arrays as they are: with 8 runs ×
 * 2 lines × 300 points per chart, the clone (and its garbage) was the largest single cost of a first draw.
 */
export function linePoints(x: readonly number[], y: readonly (number | null)[]): Float64Array {
  const out = new Float64Array(x.length * 2);
  for (let i = 0; i < x.length; i++) {
    out[2 * i] = x[i];
    out[2 * i + 1] = y[i] ?? NaN;
  }
  return out;
}

/** A tooltip value: four significant digits, '—' for none. */
function fmtTip(v: unknown): string {
  return typeof v === 'number' ? String(Number(v.toPrecision(4))) : '—';
}

/** A flat typed array has no shape ECharts can infer: its two dimensions are named (ECharts asserts this in dev). */
const XY_DIMS = ['x', 'y'];

/** Fraction of null values: above one half the metric is treated as sparse (connect finite points). */
export function isSparse(y: readonly (number | null)[]): boolean {
  if (y.length === 0) return false;
  let nulls = 0;
  // Indexed loops here and below: this runs before ECharts' first draw, still in the interpreter, where for-of's
  // iterator calls cost several times an index (40 series x 300 points per compare load).
  for (let i = 0; i < y.length; i++) if (y[i] === null) nulls++;
  return nulls / y.length > 0.5;
}

export function metricChartOption(given: MetricChartInput): Record<string, unknown> {
  const log = given.logY ? forLogAxis(given) : null;
  const input = log ? log.input : given;
  const kind = xKindOf(input);
  const fg = input.theme.dark ? '#d6d6d6' : '#333333';
  const grid = input.theme.dark ? '#3a3a3a' : '#e6e6e6';
  const series: Record<string, unknown>[] = [];

  for (const b of input.bands ?? []) {
    // Band as a stacked pair: an invisible lower line, then (hi − lo) filled on top of it.
    series.push({ name: `${b.name} band-lo`, type: 'line', data: pairs(b.x, b.lo), stack: `band:${b.name}`, symbol: 'none', lineStyle: { opacity: 0 }, silent: true, tooltip: { show: false } });
    series.push({
      name: `${b.name} ±std`, type: 'line', data: pairs(b.x, b.hi.map((h, i) => h - b.lo[i])), stack: `band:${b.name}`, symbol: 'none',
      lineStyle: { opacity: 0 }, areaStyle: { color: b.color, opacity: 0.18 }, silent: true, tooltip: { show: false },
    });
    series.push({
      name: b.name, type: 'line', data: b.x.map((x, i) => [x, b.mean[i], b.n[i]]), symbol: 'none', lineStyle: { color: b.color, width: 2 },
      itemStyle: { color: b.color }, encode: { x: 0, y: 1 }, z: 4,
      // The group's N at the hovered point: it drops where a shorter run has ended.
      tooltip: { valueFormatter: (v: unknown, i: number) => `${fmtTip(v)} · N=${b.n[i] ?? '?'}` },
    });
  }

  let markerY: number | null = null;
  for (const l of input.lines) {
    for (let i = 0; i < l.y.length; i++) {
      const v = l.y[i];
      if (v !== null && Number.isFinite(v) && (markerY === null || v < markerY)) markerY = v;
    }
  }

  input.lines.forEach((l, idx) => {
    const sparse = l.sparse ?? isSparse(l.y);
    // Dots when points are few (a one-step run is otherwise invisible) or the metric is sparse.
    const dots = sparse || l.x.length <= FEW_POINTS;
    const raw: Record<string, unknown> = {
      name: l.name, type: 'line', data: linePoints(l.x, l.y), dimensions: XY_DIMS, symbol: dots ? 'circle' : 'none', showSymbol: dots, symbolSize: 4, connectNulls: sparse,
      lineStyle: { color: l.color, width: 1, opacity: l.smoothed || l.faint ? 0.25 : 1 }, itemStyle: { color: l.color }, z: 2,
      // The store already downsampled (LTTB, spikes kept): no second pass here.
      large: l.x.length > 2000,
    };
    if (l.smoothed) {
      raw.name = `${l.name} (raw)`;
      raw.tooltip = { show: false };
      raw.silent = true;
    }
    series.push(raw);
    if (l.smoothed) {
      series.push({
        name: l.name, type: 'line', data: linePoints(l.x, l.smoothed), dimensions: XY_DIMS, symbol: 'none', showSymbol: false, connectNulls: sparse,
        lineStyle: { color: l.color, width: l.faint ? 1 : 2, opacity: l.faint ? 0.35 : 1 }, itemStyle: { color: l.color }, z: 3,
      });
    }
    // Non-finite markers: only non-NaN ones for sparse metrics (NaN there means "not logged this step").
    const marks = sparse ? l.nonFinite.filter((n) => n.value !== 'NaN') : l.nonFinite;
    if (marks.length > 0) {
      series.push({
        name: `${l.name} non-finite`, type: 'scatter', symbol: 'triangle', symbolSize: 9, z: 5,
        itemStyle: { color: '#d62728', borderColor: l.color, borderWidth: 1 },
        data: marks.map((m) => ({ value: [m.x, markerY ?? (log ? 1 : 0)], step: m.step, nonFinite: m.value })),
        tooltip: { formatter: (p: { data: { step: number; nonFinite: string } }) => `${l.name}: ${p.data.nonFinite} at step ${p.data.step}` },
      });
    }
    if (idx === 0 && input.alerts && input.alerts.length > 0) {
      raw.markLine = {
        symbol: 'none', silent: false,
        data: input.alerts.map((a) => ({ xAxis: a.x, name: a.label, lineStyle: { color: SEVERITY_COLOR[a.severity], type: 'dashed', width: 1.5 }, label: { formatter: a.label, color: SEVERITY_COLOR[a.severity], position: 'insideEndTop' } })),
      };
      raw.markArea = {
        silent: true,
        data: input.alerts.filter((a) => a.xEnd > a.x).map((a) => [{ xAxis: a.x, itemStyle: { color: SEVERITY_COLOR[a.severity], opacity: 0.08 } }, { xAxis: a.xEnd }]),
      };
    }
  });

  return {
    animation: false,
    backgroundColor: 'transparent',
    textStyle: { color: fg },
    title: { text: input.title, subtext: log ? `${input.unit} · log scale${log.dropped ? ` · ${log.dropped} value${log.dropped === 1 ? '' : 's'} ≤ 0 not drawn` : ''}` : input.unit, left: 8, top: 4, textStyle: { fontSize: 13, color: fg }, subtextStyle: { fontSize: 11 } },
    // Fixed margins, wide enough for axisLabel's short labels: ECharts 6's default outer-bounds layout lays out
    // every axis label twice (estimate, then determine) to shrink the grid to fit them, ~17 % of a chart's draw
    // in the compare view's profile (bench:ui --profile).
    grid: { left: 56, right: 16, top: 48, bottom: 36, outerBoundsMode: 'none' },
    // Themed: ECharts' default tooltip is white, a glare in dark mode (and its text then unreadable in the canvas).
    tooltip: { trigger: 'axis', confine: true, backgroundColor: input.theme.dark ? '#22272e' : '#ffffff', borderColor: grid, textStyle: { color: fg }, valueFormatter: fmtTip },
    // Zoom and pan on the x-axis only: ctrl + wheel zooms (a plain wheel still scrolls the page of charts),
    // dragging pans; the chart's "reset zoom" restores the whole range. filterMode 'none' keeps lines running
    // to the edges instead of cutting them at the first point inside the window.
    dataZoom: [{ id: 'x', type: 'inside', xAxisIndex: 0, filterMode: 'none', zoomOnMouseWheel: 'ctrl', moveOnMouseWheel: false, moveOnMouseMove: true }],
    xAxis: {
      type: 'value', name: input.xName, nameLocation: 'middle', nameGap: 22, scale: true, minInterval: kind === 'step' ? 1 : undefined,
      // The tooltip's header is the axis pointer's label: "step 171", not ECharts' "171.00".
      axisPointer: { label: { formatter: (p: { value: number }) => xValueLabel(kind, Number(p.value)) } },
      // A zoom window's edges fall between steps (52.6): label steps as the integers they are.
      axisLabel: { formatter: kind === 'step' ? (v: number) => axisLabel(Math.round(v)) : axisLabel }, axisLine: { lineStyle: { color: fg } }, splitLine: { lineStyle: { color: grid } },
    },
    yAxis: { type: input.logY ? 'log' : 'value', scale: true, axisLabel: { formatter: axisLabel }, axisLine: { lineStyle: { color: fg } }, splitLine: { lineStyle: { color: grid } } },
    series,
  };
}

export type EvidenceAlert = { metric: string; firstStep: number; lastStep: number; severity: 'info' | 'warning' | 'critical'; evidence: { steps: readonly number[]; values: readonly (number | null)[] } };

/** A small evidence chart for an alert: the metric's window with the firing span shaded. */
export function evidenceChartInput(a: EvidenceAlert, theme: ChartTheme): MetricChartInput {
  const nonFinite = a.evidence.steps.filter((_, i) => a.evidence.values[i] === null).map((step) => ({ x: step, step, value: 'non-finite' }));
  return {
    title: a.metric, unit: '', xName: 'step', theme,
    lines: [{ name: a.metric, color: PALETTE[0], x: a.evidence.steps, y: a.evidence.values, smoothed: null, nonFinite, sparse: false }],
    alerts: [{ x: a.firstStep, xEnd: a.lastStep, label: 'fired', severity: a.severity }],
  };
}

export function evidenceChartOption(a: EvidenceAlert, theme: ChartTheme): Record<string, unknown> {
  return metricChartOption(evidenceChartInput(a, theme));
}
