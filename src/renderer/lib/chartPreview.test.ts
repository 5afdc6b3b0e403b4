import { describe, expect, it } from 'vitest';
import { drawPreview, GRID, niceAxis, niceInterval, type Ctx2D } from './chartPreview';
import type { MetricChartInput } from './chartOptions';

/** A 2D context that records what is drawn: strokes with their style, texts, filled triangles, state depth. */
function recorder() {
  const strokes: { color: string; alpha: number; width: number; points: [number, number][]; dashed: boolean }[] = [];
  const texts: string[] = [];
  let fills = 0;
  let depth = 0;
  let path: [number, number][] = [];
  let dash: number[] = [];
  const ctx = {
    fillStyle: '', strokeStyle: '', lineWidth: 1, globalAlpha: 1, font: '', textAlign: 'left', textBaseline: 'top',
    save: () => void depth++,
    restore: () => void depth--,
    setTransform: () => undefined,
    clearRect: () => undefined,
    beginPath: () => void (path = []),
    moveTo: (x: number, y: number) => void path.push([x, y]),
    lineTo: (x: number, y: number) => void path.push([x, y]),
    closePath: () => undefined,
    stroke: () => void strokes.push({ color: String(ctx.strokeStyle), alpha: ctx.globalAlpha, width: ctx.lineWidth, points: path, dashed: dash.length > 0 }),
    fill: () => void fills++,
    fillText: (t: string) => void texts.push(t),
    setLineDash: (d: number[]) => void (dash = d),
  };
  return { ctx: ctx as unknown as Ctx2D, strokes, texts, fills: () => fills, depth: () => depth };
}

const input = (over: Partial<MetricChartInput> = {}): MetricChartInput => ({
  title: 'Success', unit: '', xName: 'step', theme: { dark: false },
  lines: [
    { name: 'a', color: '#4e79a7', x: [0, 1, 2, 3], y: [0.1, 0.2, null, 0.4], smoothed: [0.1, 0.15, 0.15, 0.3], nonFinite: [{ x: 2, step: 2, value: 'NaN' }] },
    { name: 'b', color: '#f28e2b', x: [0, 1, 2, 3], y: [0.5, 0.6, 0.7, 0.8], smoothed: null, nonFinite: [] },
  ],
  alerts: [{ x: 1, xEnd: 3, label: 'kl', severity: 'critical' }],
  ...over,
});

describe('chart first frame (chartPreview)', () => {
  it('picks nice intervals and axis extents as ECharts does (1, 2, 3, 5 × 10^k)', () => {
    expect(niceInterval(0.14)).toBeCloseTo(0.1);
    expect(niceInterval(0.24)).toBeCloseTo(0.2);
    expect(niceInterval(0.35)).toBeCloseTo(0.3);
    expect(niceInterval(420)).toBe(500);
    expect(niceInterval(8)).toBe(10);
    expect(niceAxis(0.1, 0.8)).toEqual({ min: 0.1, max: 0.8, ticks: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] });
    expect(niceAxis(0, 1000)).toEqual({ min: 0, max: 1000, ticks: [0, 200, 400, 600, 800, 1000] });
    // (1997 − 3) / 5 = 398.8 rounds to 300 (f = 3.99 < 4), so the extent grows to a multiple of it
    expect(niceAxis(3, 1997)).toEqual({ min: 0, max: 2100, ticks: [0, 300, 600, 900, 1200, 1500, 1800, 2100] });
  });

  it('draws every line in its colour inside the grid, raw faint behind smoothed, with alerts and non-finite markers', () => {
    const r = recorder();
    expect(drawPreview(r.ctx, input(), 400, 240, 2)).toBe(true);
    const lines = r.strokes.filter((s) => s.color === '#4e79a7' || s.color === '#f28e2b');
    // a: raw (faint) + smoothed; b: raw only (opaque)
    expect(lines.map((s) => [s.color, s.alpha])).toEqual([['#4e79a7', 0.25], ['#4e79a7', 1], ['#f28e2b', 1]]);
    // the raw line of a breaks at its null: moveTo again after the gap (3 points drawn, not 4)
    expect(lines[0].points).toHaveLength(3);
    for (const s of lines) for (const [x, y] of s.points) {
      expect(x).toBeGreaterThanOrEqual(GRID.left - 1e-9);
      expect(x).toBeLessThanOrEqual(400 - GRID.right + 1e-9);
      expect(y).toBeGreaterThanOrEqual(GRID.top - 1e-9);
      expect(y).toBeLessThanOrEqual(240 - GRID.bottom + 1e-9);
    }
    // b's highest point is at the top of the nice extent (0.8), a's lowest at the bottom (0.1)
    expect(Math.min(...lines[2].points.map((p) => p[1]))).toBeCloseTo(GRID.top);
    expect(r.strokes.filter((s) => s.dashed && s.color === '#d62728')).toHaveLength(1);
    expect(r.fills()).toBe(1);
    expect(r.texts).toContain('Success');
    expect(r.texts).toContain('0.8');
    expect(r.texts).toContain('step');
    expect(r.depth()).toBe(0);
  });

  it('draws only the title when nothing is finite, and leaves the context state as it found it', () => {
    const r = recorder();
    const empty = input({ lines: [{ name: 'a', color: '#000', x: [0, 1], y: [null, null], smoothed: null, nonFinite: [] }], alerts: [] });
    expect(drawPreview(r.ctx, empty, 400, 240, 1)).toBe(false);
    expect(r.strokes).toHaveLength(0);
    expect(r.texts).toEqual(['Success']);
    expect(r.depth()).toBe(0);
  });
});
