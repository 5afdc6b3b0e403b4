/**
 * ECharts option builders, pure so they can be tested without a DOM. The views hand the Chart component a
 * MetricChartInput (plain data, so it can be posted to the chart worker); the option is built where ECharts
 * runs (src/renderer/src/components/chartWorker.ts, or the page when there is no worker).
 *
 * Conventions: raw data is drawn faintly behind smoothed curves; non-finite values (null in the data) are
 * drawn as red triangles on the x-axis at their step, never silently dropped; alerts are shaded spans from
 * their first to their last step, one per run and stretch of overlapping alerts, in the run's colour (the views
 * pass a chart only the alerts on its own metric unless asked for all).
 */
import { nanMeansNotApplicable } from '../../shared/metrics';

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
  /** A point per run (a scatter across runs): a large marker, no line. */
  readonly marker?: boolean;
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
  /** Short (the rule): the run is told by the band's colour. */
  readonly label: string;
  readonly severity: 'info' | 'warning' | 'critical';
  /** The run it belongs to: one run's overlapping alerts share one band. */
  readonly run?: string;
  /** The run's colour (default: the severity's). */
  readonly color?: string;
  /** How bad, among one run's alerts of the same rule (larger is worse): the value the alert cites, e.g. a spike's. */
  readonly weight?: number;
}

/** A horizontal reference line (an alert's threshold). */
export interface LevelLine {
  readonly y: number;
  readonly label: string;
}

/** A point to name on the chart (the value an alert's message cites). */
export interface CitedPoint {
  readonly x: number;
  readonly y: number;
  readonly label: string;
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
  /** Threshold lines; the y-axis stretches to show them. */
  readonly levels?: readonly LevelLine[];
  /** Points named with a label (an alert's cited peak). */
  readonly cited?: readonly CitedPoint[];
  /**
   * Open zoomed to this x window (an alert's step link). Applied once per `id`: the user's own zoom, and a reset,
   * are kept through later redraws (echartsSetup.ts `draw`).
   */
  readonly zoom?: { readonly from: number; readonly to: number; readonly id: string };
  /** A vertical marker at this x (the step an alert link opened the run at). */
  readonly cursor?: number;
  /** Stretches of x with no points on purpose (the middle an alert's evidence window leaves out), shaded and named. */
  readonly skipped?: readonly SkippedSpan[];
}

/** Between two kept points `from` and `to`, nothing was kept; `label` says so on the chart. */
export interface SkippedSpan {
  readonly from: number;
  readonly to: number;
  readonly label: string;
}

/** What the x-axis counts: steps, wall seconds, tokens, or any metric's value (a scatter across runs). */
export type XKind = 'step' | 'wall' | 'tokens' | 'value';

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
  if (kind === 'value') return axisLabel(v);
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
  const lines = input.lines.map((l) => ({
    ...l,
    y: positiveOnly(l.y, raw),
    smoothed: l.smoothed ? positiveOnly(l.smoothed, scratch) : null,
  }));
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
/** A step axis's tick label: the step, or nothing at a position between steps (a zoom window's edge). */
export function stepTickLabel(v: number): string {
  return Number.isInteger(v) ? axisLabel(v) : '';
}

export function axisLabel(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(1);
  return String(Number(v.toPrecision(4)));
}

const SEVERITY_COLOR = { info: '#4e79a7', warning: '#f28e2b', critical: '#d62728' } as const;
const RANK = { info: 0, warning: 1, critical: 2 } as const;

/** One shaded band: a run's alerts whose spans overlap or touch, merged. */
export interface AlertBand {
  readonly run: string;
  readonly color: string;
  readonly from: number;
  readonly to: number;
  /** The worst severity among them (the label's colour). */
  readonly severity: AlertMark['severity'];
  /** The first rule, and how many other rules share the band ("grad_norm_spike +2"). */
  readonly label: string;
  readonly count: number;
  /** The largest weight among its alerts (absent when none has one). */
  readonly weight?: number;
}

/**
 * Alerts as bands: per run, spans that overlap or lie within `gap` of each other become one band (a collapse
 * fires eight rules over the same steps: eight stacked shadings and labels hid the curve).
 */
export function alertBands(marks: readonly AlertMark[], gap = 0): AlertBand[] {
  const byRun = new Map<string, AlertMark[]>();
  for (const m of marks) {
    const k = m.run ?? '';
    const list = byRun.get(k);
    if (list) list.push(m);
    else byRun.set(k, [m]);
  }
  const out: AlertBand[] = [];
  for (const [run, list] of byRun) {
    const sorted = [...list].sort((a, b) => a.x - b.x);
    let cur: { from: number; to: number; marks: AlertMark[] } | null = null;
    const close = () => {
      if (!cur) return;
      const labels = [...new Set(cur.marks.map((m) => m.label))];
      const worst = cur.marks.reduce((w, m) => (RANK[m.severity] > RANK[w] ? m.severity : w), cur.marks[0].severity);
      const band: { -readonly [K in keyof AlertBand]: AlertBand[K] } = {
        run,
        color: cur.marks[0].color ?? SEVERITY_COLOR[worst],
        from: cur.from,
        to: cur.to,
        severity: worst,
        label: labels.length > 1 ? `${labels[0]} +${labels.length - 1}` : labels[0],
        count: cur.marks.length,
      };
      const weights = cur.marks.map((m) => m.weight).filter((w): w is number => w !== undefined && Number.isFinite(w));
      if (weights.length > 0) band.weight = Math.max(...weights);
      out.push(band);
    };
    for (const m of sorted) {
      const end = Math.max(m.x, m.xEnd);
      if (cur && m.x <= cur.to + gap) {
        cur.to = Math.max(cur.to, end);
        cur.marks.push(m);
      } else {
        close();
        cur = { from: m.x, to: end, marks: [m] };
      }
    }
    close();
  }
  return out;
}

/**
 * Which bands carry a label. Of one run's bands with the same label (a healthy run with eight separate grad-norm
 * spikes: eight "warning · grad_norm_spike" labels overlapped into a smear), only the worst is labelled —
 * highest severity, then largest weight, then earliest — and says "worst of N"; every band's tooltip lists the
 * steps of all of them, so none is lost.
 */
export function bandLabels(bands: readonly AlertBand[]): { text: string | null; tip: string }[] {
  const groups = new Map<string, number[]>();
  bands.forEach((b, i) => {
    const k = `${b.run}\u0000${b.label}`;
    const g = groups.get(k);
    if (g) g.push(i);
    else groups.set(k, [i]);
  });
  const out: { text: string | null; tip: string }[] = bands.map((b) => ({
    text: `${b.severity} · ${b.label}`,
    tip: `${b.severity} · ${b.label}, ${stepSpan(b)}`,
  }));
  for (const idx of groups.values()) {
    if (idx.length < 2) continue;
    const worse = (i: number, j: number) => {
      const a = bands[i];
      const b = bands[j];
      if (RANK[a.severity] !== RANK[b.severity]) return RANK[a.severity] > RANK[b.severity];
      return (a.weight ?? -Infinity) > (b.weight ?? -Infinity);
    };
    const worst = idx.reduce((w, i) => (worse(i, w) ? i : w), idx[0]);
    const b = bands[worst];
    const tip = `${b.label}: ${idx.length} alerts, at ${idx.map((i) => stepSpan(bands[i])).join(', ')}; the label marks the worst, ${stepSpan(b)}${b.weight !== undefined ? ` (${short(b.weight)})` : ''}`;
    for (const i of idx) out[i] = { text: i === worst ? `${b.severity} · ${b.label} (worst of ${idx.length})` : null, tip };
  }
  return out;
}

function stepSpan(b: AlertBand): string {
  return b.from === b.to ? `step ${b.from}` : `steps ${b.from}–${b.to}`;
}

/** The x range of everything drawn (for placing labels away from the chart's edges). */
function xRange(input: MetricChartInput): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  const take = (xs: readonly number[]) => {
    for (let i = 0; i < xs.length; i++) {
      if (xs[i] < lo) lo = xs[i];
      if (xs[i] > hi) hi = xs[i];
    }
  };
  for (const l of input.lines) take(l.x);
  for (const b of input.bands ?? []) take(b.x);
  return lo <= hi ? [lo, hi] : null;
}

/** A label anchored on the side of its x that faces the chart's middle, so it is never cut off at an edge. */
export function labelSide(x: number, range: [number, number] | null): 'left' | 'right' {
  if (!range || range[1] <= range[0]) return 'right';
  return x > (range[0] + range[1]) / 2 ? 'left' : 'right';
}

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
    series.push({
      name: `${b.name} band-lo`,
      type: 'line',
      data: pairs(b.x, b.lo),
      stack: `band:${b.name}`,
      symbol: 'none',
      lineStyle: { opacity: 0 },
      silent: true,
      tooltip: { show: false },
    });
    series.push({
      name: `${b.name} ±std`,
      type: 'line',
      data: pairs(
        b.x,
        b.hi.map((h, i) => h - b.lo[i]),
      ),
      stack: `band:${b.name}`,
      symbol: 'none',
      lineStyle: { opacity: 0 },
      areaStyle: { color: b.color, opacity: 0.18 },
      silent: true,
      tooltip: { show: false },
    });
    series.push({
      name: b.name,
      type: 'line',
      data: b.x.map((x, i) => [x, b.mean[i], b.n[i]]),
      symbol: 'none',
      lineStyle: { color: b.color, width: 2 },
      itemStyle: { color: b.color },
      encode: { x: 0, y: 1 },
      z: 4,
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
      name: l.name,
      type: 'line',
      data: linePoints(l.x, l.y),
      dimensions: XY_DIMS,
      symbol: dots || l.marker ? 'circle' : 'none',
      showSymbol: dots || l.marker === true,
      symbolSize: l.marker ? 11 : 4,
      connectNulls: sparse,
      lineStyle: { color: l.color, width: 1, opacity: l.smoothed || l.faint ? 0.25 : 1 },
      itemStyle: { color: l.color },
      z: 2,
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
        name: l.name,
        type: 'line',
        data: linePoints(l.x, l.smoothed),
        dimensions: XY_DIMS,
        symbol: 'none',
        showSymbol: false,
        connectNulls: sparse,
        lineStyle: { color: l.color, width: l.faint ? 1 : 2, opacity: l.faint ? 0.35 : 1 },
        itemStyle: { color: l.color },
        z: 3,
      });
    }
    // Non-finite markers: only non-NaN ones for sparse metrics (NaN there means "not logged this step").
    const marks = sparse ? l.nonFinite.filter((n) => n.value !== 'NaN') : l.nonFinite;
    if (marks.length > 0) {
      series.push({
        name: `${l.name} non-finite`,
        type: 'scatter',
        symbol: 'triangle',
        symbolSize: 9,
        z: 5,
        itemStyle: { color: '#d62728', borderColor: l.color, borderWidth: 1 },
        data: marks.map((m) => ({ value: [m.x, markerY ?? (log ? 1 : 0)], step: m.step, nonFinite: m.value })),
        tooltip: {
          formatter: (p: { data: { step: number; nonFinite: string } }) => `${l.name}: ${p.data.nonFinite} at step ${p.data.step}`,
        },
      });
    }
    if (idx === 0) decorate(raw, input, kind, fg, log !== null);
  });

  for (const p of input.cited ?? []) {
    if (log && p.y <= 0) continue;
    const side = labelSide(p.x, xRange(input));
    series.push({
      name: p.label,
      type: 'scatter',
      symbol: 'circle',
      symbolSize: 9,
      z: 6,
      silent: true,
      tooltip: { show: false },
      itemStyle: { color: 'transparent', borderColor: fg, borderWidth: 2 },
      label: { show: true, formatter: p.label, position: side, color: fg, fontSize: 11 },
      data: [[p.x, p.y]],
    });
  }

  const levels = (input.levels ?? []).filter((l) => Number.isFinite(l.y) && (!log || l.y > 0)).map((l) => l.y);
  // The y-axis reaches the threshold lines (ECharts sizes it to the series' data alone); null leaves ECharts its
  // own rounded bound when the data already spans them.
  const lowest = Math.min(...levels);
  const highest = Math.max(...levels);
  const yFit = levels.length
    ? { min: (e: { min: number }) => (lowest < e.min ? lowest : null), max: (e: { max: number }) => (highest > e.max ? highest : null) }
    : {};
  const zoomTo = input.zoom ? { startValue: input.zoom.from, endValue: input.zoom.to } : {};

  const subtext = log
    ? `${input.unit} · log scale${log.dropped ? ` · ${log.dropped} value${log.dropped === 1 ? '' : 's'} ≤ 0 not drawn` : ''}`
    : input.unit;
  return {
    animation: false,
    backgroundColor: 'transparent',
    textStyle: { color: fg },
    title: { text: input.title, subtext, left: 8, top: 4, textStyle: { fontSize: 13, color: fg }, subtextStyle: { fontSize: 11 } },
    // Fixed margins, wide enough for axisLabel's short labels: ECharts 6's default outer-bounds layout lays out
    // every axis label twice (estimate, then determine) to shrink the grid to fit them, ~17 % of a chart's draw
    // in the compare view's profile (bench:ui --profile). The top leaves the highest y label clear of the subtitle
    // (an alert card's small evidence chart has none, and needs the height).
    grid: { left: 56, right: 16, top: subtext ? 54 : 36, bottom: 36, outerBoundsMode: 'none' },
    // Themed: ECharts' default tooltip is white, a glare in dark mode (and its text then unreadable in the canvas).
    tooltip: {
      trigger: 'axis',
      confine: true,
      backgroundColor: input.theme.dark ? '#22272e' : '#ffffff',
      borderColor: grid,
      textStyle: { color: fg },
      valueFormatter: fmtTip,
    },
    // Zoom and pan on the x-axis only: ctrl + wheel zooms (a plain wheel still scrolls the page of charts),
    // dragging pans; the chart's "reset zoom" restores the whole range. filterMode 'none' keeps lines running
    // to the edges instead of cutting them at the first point inside the window.
    dataZoom: [
      {
        id: 'x',
        type: 'inside',
        xAxisIndex: 0,
        filterMode: 'none',
        zoomOnMouseWheel: 'ctrl',
        moveOnMouseWheel: false,
        moveOnMouseMove: true,
        ...zoomTo,
      },
    ],
    xAxis: {
      type: 'value',
      name: input.xName,
      nameLocation: 'middle',
      nameGap: 22,
      scale: true,
      minInterval: kind === 'step' ? 1 : undefined,
      // The tooltip's header is the axis pointer's label: "step 171", not ECharts' "171.00".
      axisPointer: { label: { formatter: (p: { value: number }) => xValueLabel(kind, Number(p.value)) } },
      // A zoom window's edges fall between steps (52.6), and ECharts labels the edges too: rounded, they repeated
      // the next tick ("3 3 … 6 6" under ctrl + wheel). Steps are integers: only integer positions get a label.
      axisLabel: { formatter: kind === 'step' ? stepTickLabel : axisLabel },
      axisLine: { lineStyle: { color: fg } },
      splitLine: { lineStyle: { color: grid } },
    },
    yAxis: {
      type: input.logY ? 'log' : 'value',
      scale: true,
      ...yFit,
      axisLabel: { formatter: axisLabel },
      axisLine: { lineStyle: { color: fg } },
      splitLine: { lineStyle: { color: grid } },
    },
    series,
  };
}

/**
 * The alert bands, threshold lines and step marker, as mark areas and lines of the chart's first series (ECharts
 * draws marks on a series; the first raw line is always there when anything is).
 */
function decorate(raw: Record<string, unknown>, input: MetricChartInput, kind: XKind, fg: string, log: boolean): void {
  const range = xRange(input);
  // A one-step alert covers its step's width on a step axis (a zero-width band would not show).
  const pad = kind === 'step' ? 0.5 : 0;
  const bands = alertBands(input.alerts ?? [], 2 * pad);
  const runs = [...new Set(bands.map((b) => b.run))];
  const lines: Record<string, unknown>[] = [];
  for (const b of bands)
    lines.push({ xAxis: b.from, lineStyle: { color: b.color, type: 'dashed', width: 1.2, opacity: 0.9 }, label: { show: false } });
  // The value range is read by threshold labels and alert bands only: scanned once, and only for charts that have them.
  let yRange: [number, number] | null = null;
  const values = (): [number, number] => (yRange ??= valueRange(input));
  let lowLevel = false;
  for (const l of input.levels ?? []) {
    if (!Number.isFinite(l.y) || (log && l.y <= 0)) continue;
    // Inside the plot at its left end, under the line: never past the chart's edge, clear of the alert band's
    // label (top right, where an alert's span usually ends) and of a cited best level above the threshold.
    // Above it when the line runs along the plot's floor (a length threshold far below the runaway), where the
    // label under it would sit on the x-axis.
    const [lo, hi] = values();
    const low = hi > lo && l.y <= lo + 0.15 * (hi - lo);
    lowLevel ||= low;
    lines.push({
      yAxis: l.y,
      lineStyle: { color: SEVERITY_COLOR.critical, type: 'dotted', width: 1.5 },
      label: { formatter: l.label, position: low ? 'insideStartTop' : 'insideStartBottom', color: SEVERITY_COLOR.critical, fontSize: 11 },
    });
  }
  if (input.cursor !== undefined)
    lines.push({ xAxis: input.cursor, lineStyle: { color: fg, type: 'solid', width: 1.5, opacity: 0.8 }, label: { show: false } });
  if (lines.length > 0) raw.markLine = { symbol: 'none', silent: true, animation: false, data: lines };
  const skipped = (input.skipped ?? []).map((g) => [
    {
      xAxis: g.from,
      name: g.label.replace('\n', ' '),
      itemStyle: { color: fg, opacity: 0.07 },
      label: { show: true, formatter: g.label, position: 'inside', color: fg, opacity: 0.75, fontSize: 10 },
    },
    { xAxis: g.to },
  ]);
  if (bands.length > 0 || skipped.length > 0) {
    const labels = bandLabels(bands);
    raw.markArea = {
      // Hovering a band names it and, for a rule with several bands, the steps of all of them (bandLabels).
      silent: false,
      tooltip: { trigger: 'item', confine: true, formatter: (p: { name?: string }) => p.name ?? '' },
      data: [
        ...bands.map((b, i) => {
          const side = labelSide((b.from + b.to) / 2, range);
          const bottom = citedHighIn(input, b.from, b.to, values);
          const corner = `inside${bottom ? 'Bottom' : 'Top'}${side === 'right' ? 'Left' : 'Right'}`;
          const row = runs.indexOf(b.run) + (bottom && lowLevel ? 1 : 0);
          return [
            {
              xAxis: b.from - pad,
              name: labels[i].tip,
              itemStyle: { color: b.color, opacity: 0.12 },
              // Inside the band's top, on the side facing the chart's middle; one row per run, in the run's colour
              // (which row is whose), the worst severity named. At the band's bottom instead when a value the alert
              // cites sits high inside the band (a grad-norm peak): the two labels overlapped there. One row up from
              // the bottom when a threshold line runs along the floor.
              label: {
                show: labels[i].text !== null,
                formatter: labels[i].text ?? '',
                position: corner,
                color: b.color,
                fontSize: 11,
                fontWeight: 'bold',
                offset: [0, row === 0 ? 0 : (bottom ? -13 : 13) * row],
              },
            },
            { xAxis: b.to + pad },
          ];
        }),
        ...skipped,
      ],
    };
  }
}

/** The lowest and highest value the chart shows: its lines, cited points and threshold levels. */
function valueRange(input: MetricChartInput): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  const see = (v: number | null): void => {
    if (v === null || !Number.isFinite(v)) return;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  };
  for (const l of input.lines) for (const v of l.y) see(v);
  for (const p of input.cited ?? []) see(p.y);
  for (const l of input.levels ?? []) see(l.y);
  return [lo, hi];
}

/** Whether a cited value lies in [from, to] on the upper half of the chart's values. */
function citedHighIn(input: MetricChartInput, from: number, to: number, values: () => [number, number]): boolean {
  const inside = (input.cited ?? []).filter((p) => p.x >= from && p.x <= to && Number.isFinite(p.y));
  if (inside.length === 0) return false;
  const [lo, hi] = values();
  return hi > lo && inside.some((p) => p.y >= (lo + hi) / 2);
}

export type EvidenceAlert = {
  metric: string;
  rule?: string;
  firstStep: number;
  lastStep: number;
  severity: 'info' | 'warning' | 'critical';
  evidence: { steps: readonly number[]; values: readonly (number | null)[] };
  peak?: { step: number; value: number };
  threshold?: number;
};

/**
 * The evidence's points with a gap where the detector skipped steps (the middle of a long alert, or a cited peak
 * long before the onset): a step gap over 3× the median one becomes a break in the line, not a made-up slope.
 */
export function evidenceLine(
  steps: readonly number[],
  values: readonly (number | null)[],
): { x: number[]; y: (number | null)[]; skipped: SkippedSpan[] } {
  const diffs: number[] = [];
  for (let i = 1; i < steps.length; i++) diffs.push(steps[i] - steps[i - 1]);
  const sorted = [...diffs].sort((a, b) => a - b);
  const typical = sorted.length ? sorted[Math.floor(sorted.length / 2)] : 1;
  const x: number[] = [];
  const y: (number | null)[] = [];
  const skipped: SkippedSpan[] = [];
  for (let i = 0; i < steps.length; i++) {
    if (i > 0 && steps[i] - steps[i - 1] > 3 * typical) {
      x.push((steps[i] + steps[i - 1]) / 2);
      y.push(null);
      // A count only where every step was logged: on a log written every k steps the span's width is not it.
      const label = typical === 1 ? `${steps[i] - steps[i - 1] - 1} steps\nnot kept` : 'steps\nnot kept';
      skipped.push({ from: steps[i - 1], to: steps[i], label });
    }
    x.push(steps[i]);
    y.push(values[i]);
  }
  return { x, y, skipped };
}

/** Three significant digits (a threshold or cited value named on a small chart). */
function short(v: number): string {
  return Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(1) : String(Number(v.toPrecision(3)));
}

/**
 * A small evidence chart for an alert: the metric's window with the firing span shaded, the threshold the rule
 * crossed as a line, and the value its message cites named at its step.
 */
export function evidenceChartInput(a: EvidenceAlert, theme: ChartTheme): MetricChartInput {
  const { x, y, skipped } = evidenceLine(a.evidence.steps, a.evidence.values);
  // Validation keys are NaN between validations (alerts stored before the detector left those out).
  const nonFinite = nanMeansNotApplicable(a.metric)
    ? []
    : a.evidence.steps.filter((_, i) => a.evidence.values[i] === null).map((step) => ({ x: step, step, value: 'non-finite' }));
  return {
    title: a.metric,
    unit: '',
    xName: 'step',
    theme,
    lines: [{ name: a.metric, color: PALETTE[0], x, y, smoothed: null, nonFinite, sparse: nanMeansNotApplicable(a.metric) }],
    alerts: [{ x: a.firstStep, xEnd: a.lastStep, label: a.rule ?? 'fired', severity: a.severity, color: SEVERITY_COLOR[a.severity] }],
    levels: a.threshold !== undefined ? [{ y: a.threshold, label: `threshold ${short(a.threshold)}` }] : [],
    cited: a.peak ? [{ x: a.peak.step, y: a.peak.value, label: `${short(a.peak.value)} at step ${a.peak.step}` }] : [],
    // The detector keeps an alert's onset and latest steps (evidenceMax points): the middle it left out is named,
    // or the break in the line reads as missing data. The run view's chart at the alert has every step.
    skipped,
  };
}

export function evidenceChartOption(a: EvidenceAlert, theme: ChartTheme): Record<string, unknown> {
  return metricChartOption(evidenceChartInput(a, theme));
}
