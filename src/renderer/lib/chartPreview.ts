/**
 * A chart's first frame, drawn with plain Canvas 2D before ECharts has drawn it: the same grid, nice axis ticks,
 * raw lines faint behind the smoothed ones, group means, alert lines and non-finite markers, in the same colours.
 *
 * Why: on a cold page ECharts' first setOption runs its code for the first time (120–250 ms for the first chart on
 * a quiet 2-core machine, bench:ui), after the data has arrived. This frame costs a few ms a chart (10–25 ms for
 * the first one in a cold worker), so the curves are on screen soon after the data; ECharts then draws over it
 * (tooltips, exact layout). The chart worker draws it
 * (chartWorker.ts); bench:ui reports both moments.
 *
 * Pure: takes a 2D context-like object, so it is tested without a DOM.
 */
import { axisLabel, isSparse, type MetricChartInput } from './chartOptions';

/** The grid margins of metricChartOption (outerBoundsMode 'none'): the preview's plot area is ECharts'. */
export const GRID = { left: 56, right: 16, top: 48, bottom: 36 } as const;

/** The subset of CanvasRenderingContext2D / OffscreenCanvasRenderingContext2D the preview uses. */
export interface Ctx2D {
  fillStyle: string | CanvasGradient | CanvasPattern;
  strokeStyle: string | CanvasGradient | CanvasPattern;
  lineWidth: number;
  globalAlpha: number;
  font: string;
  textAlign: CanvasTextAlign;
  textBaseline: CanvasTextBaseline;
  save(): void;
  restore(): void;
  setTransform(a: number, b: number, c: number, d: number, e: number, f: number): void;
  clearRect(x: number, y: number, w: number, h: number): void;
  beginPath(): void;
  moveTo(x: number, y: number): void;
  lineTo(x: number, y: number): void;
  closePath(): void;
  stroke(): void;
  fill(): void;
  fillText(text: string, x: number, y: number): void;
  setLineDash(segments: number[]): void;
}

/** ECharts' "nice" rounding of an interval (numberUtil.nice with round = true): 1, 2, 3, 5 or 10 × 10^k. */
export function niceInterval(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const exp = Math.floor(Math.log10(raw));
  const base = 10 ** exp;
  const f = raw / base;
  const nf = f < 1.5 ? 1 : f < 2.5 ? 2 : f < 4 ? 3 : f < 7 ? 5 : 10;
  return nf * base;
}

/** A scale:true value axis' extent and ticks for data in [min, max], about five intervals as ECharts picks. */
export function niceAxis(min: number, max: number, splits = 5): { min: number; max: number; ticks: number[] } {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { min: 0, max: 1, ticks: [0, 1] };
  if (min === max) {
    const pad = min === 0 ? 1 : Math.abs(min) / 2;
    min -= pad;
    max += pad;
  }
  const step = niceInterval((max - min) / splits);
  const lo = Math.floor(min / step) * step;
  const hi = Math.ceil(max / step) * step;
  const ticks: number[] = [];
  for (let v = lo, i = 0; v <= hi + step * 1e-9 && i < 50; v = lo + step * ++i) ticks.push(Number(v.toPrecision(12)));
  return { min: lo, max: hi, ticks };
}

function extent(input: MetricChartInput): { x: [number, number]; y: [number, number] } {
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  const take = (xs: readonly number[], ys: readonly (number | null)[]) => {
    for (let i = 0; i < xs.length; i++) {
      const v = ys[i];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      if (input.logY && v <= 0) continue;
      if (xs[i] < x0) x0 = xs[i];
      if (xs[i] > x1) x1 = xs[i];
      if (v < y0) y0 = v;
      if (v > y1) y1 = v;
    }
  };
  for (const l of input.lines) {
    take(l.x, l.y);
    if (l.smoothed) take(l.x, l.smoothed);
  }
  for (const b of input.bands ?? []) {
    take(b.x, b.lo);
    take(b.x, b.hi);
  }
  return { x: [x0, x1], y: [y0, y1] };
}

/**
 * Draws `input` into a canvas of `width` × `height` CSS pixels at `dpr` device pixels per CSS pixel. Returns false
 * (and draws nothing but the title) when there is nothing finite to draw.
 */
export function drawPreview(ctx: Ctx2D, input: MetricChartInput, width: number, height: number, dpr: number): boolean {
  // The context is zrender's: leave its state (transform, alpha, dash, font) as it was.
  ctx.save();
  try {
    return draw(ctx, input, width, height, dpr);
  } finally {
    ctx.restore();
  }
}

function draw(ctx: Ctx2D, input: MetricChartInput, width: number, height: number, dpr: number): boolean {
  const fg = input.theme.dark ? '#d6d6d6' : '#333333';
  const gridColor = input.theme.dark ? '#3a3a3a' : '#e6e6e6';
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.globalAlpha = 1;
  ctx.setLineDash([]);
  ctx.fillStyle = fg;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'top';
  ctx.font = 'bold 13px sans-serif';
  ctx.fillText(input.title, 8, 4 + 1);
  if (input.unit) {
    ctx.font = '11px sans-serif';
    ctx.fillStyle = input.theme.dark ? '#aaaaaa' : '#888888';
    ctx.fillText(input.unit, 8, 4 + 24);
    ctx.fillStyle = fg;
  }
  const ex = extent(input);
  if (!(ex.x[0] <= ex.x[1]) || !(ex.y[0] <= ex.y[1])) return false;
  const pw = width - GRID.left - GRID.right;
  const ph = height - GRID.top - GRID.bottom;
  if (pw <= 0 || ph <= 0) return false;
  const xa = niceAxis(ex.x[0], ex.x[1]);
  const log = input.logY === true;
  const ya = log ? niceAxis(Math.log10(ex.y[0]), Math.log10(ex.y[1])) : niceAxis(ex.y[0], ex.y[1]);
  if (log) {
    ya.min = Math.floor(ya.min);
    ya.max = Math.ceil(ya.max);
    ya.ticks = [];
    for (let e = ya.min; e <= ya.max; e++) ya.ticks.push(e);
  }
  const px = (v: number) => GRID.left + ((v - xa.min) / (xa.max - xa.min || 1)) * pw;
  const yv = (v: number) => (log ? Math.log10(v) : v);
  const py = (v: number) => GRID.top + ph - ((yv(v) - ya.min) / (ya.max - ya.min || 1)) * ph;

  // Grid lines and tick labels.
  ctx.lineWidth = 1;
  ctx.strokeStyle = gridColor;
  ctx.font = '12px sans-serif';
  ctx.fillStyle = fg;
  ctx.beginPath();
  for (const t of ya.ticks) {
    const y = Math.round(GRID.top + ph - ((t - ya.min) / (ya.max - ya.min || 1)) * ph) + 0.5;
    ctx.moveTo(GRID.left, y);
    ctx.lineTo(GRID.left + pw, y);
  }
  for (const t of xa.ticks) {
    const x = Math.round(px(t)) + 0.5;
    ctx.moveTo(x, GRID.top);
    ctx.lineTo(x, GRID.top + ph);
  }
  ctx.stroke();
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (const t of ya.ticks) ctx.fillText(axisLabel(log ? 10 ** t : t), GRID.left - 8, GRID.top + ph - ((t - ya.min) / (ya.max - ya.min || 1)) * ph);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  for (const t of xa.ticks) ctx.fillText(axisLabel(t), px(t), GRID.top + ph + 8);
  ctx.fillText(input.xName, GRID.left + pw / 2, GRID.top + ph + 22);
  ctx.strokeStyle = fg;
  ctx.beginPath();
  ctx.moveTo(GRID.left, GRID.top + ph + 0.5);
  ctx.lineTo(GRID.left + pw, GRID.top + ph + 0.5);
  ctx.stroke();

  const path = (xs: readonly number[], ys: readonly (number | null)[], connect: boolean) => {
    ctx.beginPath();
    let open = false;
    for (let i = 0; i < xs.length; i++) {
      const v = ys[i];
      if (v === null || v === undefined || !Number.isFinite(v) || (log && v <= 0)) {
        if (!connect) open = false;
        continue;
      }
      if (open) ctx.lineTo(px(xs[i]), py(v));
      else ctx.moveTo(px(xs[i]), py(v));
      open = true;
    }
    ctx.stroke();
  };
  for (const b of input.bands ?? []) {
    ctx.strokeStyle = b.color;
    ctx.lineWidth = 2;
    ctx.globalAlpha = 1;
    path(b.x, b.mean, false);
  }
  for (const l of input.lines) {
    const sparse = l.sparse ?? isSparse(l.y);
    ctx.strokeStyle = l.color;
    ctx.lineWidth = 1;
    ctx.globalAlpha = l.smoothed || l.faint ? 0.25 : 1;
    path(l.x, l.y, sparse);
    if (l.smoothed) {
      ctx.lineWidth = l.faint ? 1 : 2;
      ctx.globalAlpha = l.faint ? 0.35 : 1;
      path(l.x, l.smoothed, sparse);
    }
  }
  ctx.globalAlpha = 1;
  // Alerts: dashed lines at their first step. Non-finite values: red triangles on the x-axis.
  ctx.lineWidth = 1.5;
  ctx.setLineDash([4, 4]);
  for (const a of input.alerts ?? []) {
    if (a.x < xa.min || a.x > xa.max) continue;
    ctx.strokeStyle = a.severity === 'critical' ? '#d62728' : a.severity === 'warning' ? '#f28e2b' : '#4e79a7';
    ctx.beginPath();
    ctx.moveTo(px(a.x), GRID.top);
    ctx.lineTo(px(a.x), GRID.top + ph);
    ctx.stroke();
  }
  ctx.setLineDash([]);
  // As metricChartOption: at the lowest finite raw value.
  let markerY = Infinity;
  for (const l of input.lines) for (const v of l.y) if (v !== null && Number.isFinite(v) && v < markerY) markerY = v;
  ctx.fillStyle = '#d62728';
  for (const l of input.lines) {
    const sparse = l.sparse ?? isSparse(l.y);
    for (const m of l.nonFinite) {
      if (sparse && m.value === 'NaN') continue;
      const x = px(m.x);
      const y = Number.isFinite(markerY) && !(log && markerY <= 0) ? py(markerY) : GRID.top + ph;
      ctx.beginPath();
      ctx.moveTo(x, y - 8);
      ctx.lineTo(x - 4.5, y);
      ctx.lineTo(x + 4.5, y);
      ctx.closePath();
      ctx.fill();
    }
  }
  return true;
}
