/**
 * A chart's PNG (the chart tools' "PNG" button): the chart as drawn, on an opaque background, with a legend
 * strip under it when it draws two or more series. The page's legend is HTML outside the canvas, and a
 * picture of several coloured lines that does not say which is which is no use in a report. The same code
 * composes the image in the chart worker (OffscreenCanvas) and in the page (the fallback without one).
 */
import type { MetricChartInput } from './chartOptions';

export interface PngLegendEntry {
  readonly name: string;
  readonly color: string;
}

/** Who is drawn: the groups' bands when grouping, else the runs' lines (the hidden ones are not in the input). */
export function pngLegend(input: Pick<MetricChartInput, 'lines' | 'bands'>): PngLegendEntry[] {
  const entries = input.bands && input.bands.length > 0 ? input.bands : input.lines.filter((l) => !l.faint);
  return entries.length >= 2 ? entries.map((e) => ({ name: e.name, color: e.color })) : [];
}

const FONT_PX = 12;
const SWATCH_PX = 10;
const GAP_PX = 16;
const PAD_PX = 8;
const ROW_PX = 18;

export interface LegendLayout {
  /** Each entry's swatch position, in image pixels. */
  readonly items: readonly { readonly entry: PngLegendEntry; readonly x: number; readonly y: number }[];
  /** Height of the strip in image pixels (0 without entries). */
  readonly height: number;
}

/** Entries flowed left to right in rows across `width` image pixels; `measure` gives a text's width at FONT_PX × dpr. */
export function layoutLegend(
  entries: readonly PngLegendEntry[],
  width: number,
  dpr: number,
  measure: (text: string) => number,
): LegendLayout {
  if (entries.length === 0) return { items: [], height: 0 };
  const pad = PAD_PX * dpr;
  const items: { entry: PngLegendEntry; x: number; y: number }[] = [];
  let x = pad;
  let row = 0;
  for (const entry of entries) {
    const w = SWATCH_PX * dpr + 4 * dpr + measure(entry.name);
    if (x > pad && x + w > width - pad) {
      row++;
      x = pad;
    }
    items.push({ entry, x, y: pad + row * ROW_PX * dpr });
    x += w + GAP_PX * dpr;
  }
  return { items, height: 2 * pad + (row + 1) * ROW_PX * dpr - (ROW_PX - FONT_PX) * dpr };
}

type Ctx2D = CanvasRenderingContext2D | OffscreenCanvasRenderingContext2D;

/**
 * Draws the image on `ctx` (sized width × (height + legend height)): the background, the chart at the top, the
 * legend under it. `fontFamily` is the page's, so the legend reads like the chart's own text.
 */
export function composeChartPng(
  ctx: Ctx2D,
  chart: CanvasImageSource,
  size: { width: number; height: number },
  legend: LegendLayout,
  style: { background: string; foreground: string; dpr: number; fontFamily: string },
): void {
  const { dpr } = style;
  ctx.fillStyle = style.background;
  ctx.fillRect(0, 0, size.width, size.height + legend.height);
  ctx.drawImage(chart, 0, 0);
  ctx.font = `${FONT_PX * dpr}px ${style.fontFamily}`;
  ctx.textBaseline = 'middle';
  for (const it of legend.items) {
    const mid = size.height + it.y + (FONT_PX * dpr) / 2;
    ctx.fillStyle = it.entry.color;
    ctx.fillRect(it.x, mid - (SWATCH_PX * dpr) / 2, SWATCH_PX * dpr, SWATCH_PX * dpr);
    ctx.fillStyle = style.foreground;
    ctx.fillText(it.entry.name, it.x + SWATCH_PX * dpr + 4 * dpr, mid);
  }
}

/** The font the legend is measured and drawn with (the same string for both). */
export function legendFont(dpr: number, fontFamily: string): string {
  return `${FONT_PX * dpr}px ${fontFamily}`;
}

/** The page's fallback (no chart worker): the same image from ECharts' own PNG of the chart. */
export async function composeInPage(
  chartPng: Blob,
  legend: readonly PngLegendEntry[],
  style: { background: string; foreground: string; dpr: number; fontFamily: string },
): Promise<Blob> {
  const img = await createImageBitmap(chartPng);
  const canvas = document.createElement('canvas');
  const measure = canvas.getContext('2d');
  if (!measure) throw new Error('no 2D context for the image');
  measure.font = legendFont(style.dpr, style.fontFamily);
  const layout = layoutLegend(legend, img.width, style.dpr, (t) => measure.measureText(t).width);
  canvas.width = img.width;
  canvas.height = img.height + layout.height;
  const ctx = canvas.getContext('2d')!;
  composeChartPng(ctx, img, { width: img.width, height: img.height }, layout, style);
  img.close();
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the canvas could not be encoded as PNG'))), 'image/png'),
  );
}
