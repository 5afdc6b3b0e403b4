import { describe, expect, it } from 'vitest';
import { SVGRenderer } from 'echarts/renderers';
import { draw, echarts, hovering, reportRange, resetZoom, wireChart, type ChartReport } from './echartsSetup';
import { metricChartOption, type MetricChartInput } from '../../lib/chartOptions';

// No DOM here: ECharts' server-side mode (SVG renderer) runs the same models, zoom and axis code as the canvas.
echarts.use([SVGRenderer]);

function input(last: number): MetricChartInput {
  const x = Array.from({ length: last + 1 }, (_, i) => i);
  return {
    title: 't',
    unit: '',
    xName: 'step',
    theme: { dark: false },
    lines: [{ name: 'r', color: '#000', x, y: x.map((v) => Math.sin(v / 10)), smoothed: null, nonFinite: [] }],
  };
}

function chart() {
  return echarts.init(null as unknown as HTMLElement, undefined, { renderer: 'svg', ssr: true, width: 600, height: 240 });
}

describe('chart wiring (zoom, reports, crosshair sync)', () => {
  it('reports the x range in view, narrows it on zoom, keeps the zoom through a live redraw and resets it', () => {
    const c = chart();
    const reports: ChartReport[] = [];
    wireChart(c, undefined, (r) => reports.push(r));
    draw(c, metricChartOption(input(200)));
    reportRange(c, (r) => reports.push(r));
    expect(reports.at(-1)?.range).toEqual({ from: 0, to: 200, zoomed: false });
    expect(reports.at(-1)?.yScale).toBe('interval');

    c.dispatchAction({ type: 'dataZoom', start: 25, end: 75 });
    const zoomed = reports.at(-1)?.range;
    expect(zoomed?.zoomed).toBe(true);
    expect(zoomed!.from).toBeCloseTo(50, 6);
    expect(zoomed!.to).toBeCloseTo(150, 6);

    // A new step arrives (notMerge redraw): the zoom window stays where the user put it.
    draw(c, metricChartOption(input(240)));
    reportRange(c, (r) => reports.push(r));
    expect(reports.at(-1)?.range?.zoomed).toBe(true);
    expect(reports.at(-1)!.range!.from).toBeCloseTo(60, 6);

    resetZoom(c);
    // The whole range again, as the axis draws it unzoomed (ECharts rounds its end to a nice tick: 250).
    const fresh = chart();
    draw(fresh, metricChartOption(input(240)));
    reportRange(fresh, (r) => reports.push(r));
    const whole = reports.pop()?.range;
    expect(whole?.to).toBeGreaterThanOrEqual(240);
    expect(reports.at(-1)?.range).toEqual(whole);
    fresh.dispose();
    c.dispose();
  });
  it('moves the crosshair of every chart of a group to the hovered x', () => {
    const a = chart();
    const b = chart();
    const other = chart();
    const hovers: Record<string, (number | null)[]> = { a: [], b: [], other: [] };
    wireChart(a, 'view', (r) => r.hover !== undefined && hovers.a.push(r.hover));
    wireChart(b, 'view', (r) => r.hover !== undefined && hovers.b.push(r.hover));
    wireChart(other, undefined, (r) => r.hover !== undefined && hovers.other.push(r.hover));
    for (const c of [a, b, other]) draw(c, metricChartOption(input(200)));
    // What the pointer over chart a does: the axis pointer at a pixel, then ECharts' connect repeats it on b.
    const [px, py] = a.convertToPixel({ gridIndex: 0 }, [120, 0]) as number[];
    a.dispatchAction({ type: 'updateAxisPointer', currTrigger: 'mousemove', x: px, y: py - 20 });
    expect(hovers.a.at(-1)).toBeCloseTo(120, 0);
    expect(hovers.b.at(-1)).toBe(hovers.a.at(-1));
    expect(hovers.other).toEqual([]);
    // The pointer as the chart worker hands it to zrender: chart b becomes the hovered one, so only its tooltip
    // box shows; chart a keeps the crosshair line. (ECharts moves no axis pointer from zrender events under
    // Node, so this checks only which box shows; the e2e spec checks the pointer in Chromium.)
    const [bx, by] = b.convertToPixel({ gridIndex: 0 }, [60, 0]) as number[];
    b.getZr().handler.dispatch('mousemove', { zrX: bx, zrY: by - 20, preventDefault() {}, stopPropagation() {} });
    const showContent = (c: typeof a) => (c.getOption() as { tooltip: { showContent?: boolean }[] }).tooltip[0].showContent;
    expect(showContent(b)).toBe(true);
    expect(showContent(a)).toBe(false);
    // A live redraw of a keeps its box hidden while b is hovered.
    draw(a, metricChartOption(input(210)));
    expect(showContent(a)).toBe(false);
    for (const c of [a, b, other]) c.dispose();
  });
  it("names the hovered chart's step on every chart of the group, even where their x extents differ", () => {
    const a = chart();
    const b = chart();
    const hovers: Record<string, (number | null)[]> = { a: [], b: [] };
    wireChart(a, 'extents', (r) => r.hover !== undefined && hovers.a.push(r.hover));
    wireChart(b, 'extents', (r) => r.hover !== undefined && hovers.b.push(r.hover));
    draw(a, metricChartOption(input(200)));
    // b's axis ends at 100: the same pixel is a different x there, which ECharts' connect alone would report.
    draw(b, metricChartOption(input(100)));
    const [px, py] = a.convertToPixel({ gridIndex: 0 }, [150, 0]) as number[];
    a.getZr().handler.dispatch('mousemove', { zrX: px, zrY: py - 20, preventDefault() {}, stopPropagation() {} });
    a.dispatchAction({ type: 'updateAxisPointer', currTrigger: 'mousemove', x: px, y: py - 20 });
    expect(hovers.a.at(-1)).toBeCloseTo(150, 0);
    expect(hovers.b.at(-1)).toBe(hovers.a.at(-1));
    a.dispatchAction({ type: 'updateAxisPointer', currTrigger: 'leave' });
    for (const c of [a, b]) c.dispose();
  });
  it('takes the x of the chart a single move lands on, when another chart of the group was hovered before', () => {
    const a = chart();
    const b = chart();
    const hovers: Record<string, (number | null)[]> = { a: [], b: [] };
    wireChart(a, 'switch', (r) => r.hover !== undefined && hovers.a.push(r.hover));
    wireChart(b, 'switch', (r) => r.hover !== undefined && hovers.b.push(r.hover));
    draw(a, metricChartOption(input(200)));
    draw(b, metricChartOption(input(100)));
    // b was the hovered chart; the pointer then reaches a in one move, which the chart worker (or, in the page,
    // the container's capture listener) announces before ECharts handles the move.
    hovering(b);
    const [px, py] = a.convertToPixel({ gridIndex: 0 }, [150, 0]) as number[];
    hovering(a);
    a.dispatchAction({ type: 'updateAxisPointer', currTrigger: 'mousemove', x: px, y: py - 20 });
    expect(hovers.a.at(-1)).toBeCloseTo(150, 0);
    expect(hovers.b.at(-1)).toBe(hovers.a.at(-1));
    // Without the announcement the group still names b: b's own x at that pixel (≈75), on both charts.
    hovering(b);
    a.dispatchAction({ type: 'updateAxisPointer', currTrigger: 'mousemove', x: px + 1, y: py - 20 });
    expect(hovers.a.at(-1)).not.toBeCloseTo(150, 0);
    a.dispatchAction({ type: 'updateAxisPointer', currTrigger: 'leave' });
    for (const c of [a, b]) c.dispose();
  });
});
