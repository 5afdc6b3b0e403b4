import { describe, expect, it } from 'vitest';
import { axisLabel, evidenceChartOption, forLogAxis, isSparse, metricChartOption, xValueLabel } from './chartOptions';

type S = { name: string; type: string; data: ArrayLike<unknown>; markLine?: { data: { xAxis: number }[] } };

describe('metricChartOption', () => {
  const base = { title: 'Success', unit: 'ratio', xName: 'step', theme: { dark: false } };
  it('draws raw faintly behind the smoothed curve and marks non-finite points', () => {
    const opt = metricChartOption({
      ...base,
      lines: [{ name: 'run1', color: '#000', x: [0, 1, 2], y: [0.1, null, 0.3], smoothed: [0.1, null, 0.2], nonFinite: [{ x: 1, step: 1, value: 'NaN' }] }],
    });
    const series = opt.series as S[];
    expect(series.map((s) => s.name)).toEqual(['run1 (raw)', 'run1', 'run1 non-finite']);
    // flat [x, y] pairs, NaN where the value was non-finite (a gap in the line)
    expect([...(series[0].data as Float64Array)]).toEqual([0, 0.1, 1, NaN, 2, 0.3]);
    expect([...(series[1].data as Float64Array)]).toEqual([0, 0.1, 1, NaN, 2, 0.2]);
    // the marker sits at the lowest finite value, at the non-finite point's x
    expect(((series[2].data as unknown[])[0] as { value: number[] }).value).toEqual([1, 0.1]);
  });
  it('only marks ±Infinity on sparse metrics, where NaN means "not logged this step"', () => {
    const y = [null, null, null, 0.5];
    expect(isSparse(y)).toBe(true);
    const opt = metricChartOption({
      ...base,
      lines: [{ name: 'r', color: '#000', x: [0, 1, 2, 3], y, smoothed: null, nonFinite: [{ x: 0, step: 0, value: 'NaN' }, { x: 1, step: 1, value: 'Infinity' }, { x: 2, step: 2, value: 'NaN' }] }],
    });
    const marker = (opt.series as S[]).find((s) => s.type === 'scatter');
    expect(marker?.data).toHaveLength(1);
  });
  it('puts alerts as mark lines at their step and draws bands as stacked areas', () => {
    const opt = metricChartOption({
      ...base,
      lines: [{ name: 'r', color: '#000', x: [0, 1], y: [1, 2], smoothed: null, nonFinite: [] }],
      bands: [{ name: 'sampo (N=2)', color: '#111', x: [0, 1], mean: [1, 2], lo: [0.5, 1.5], hi: [1.5, 2.5], n: [2, 2] }],
      alerts: [{ x: 1, xEnd: 1, label: 'grad spike', severity: 'critical' }],
    });
    const series = opt.series as S[];
    expect(series[1].data).toEqual([[0, 1], [1, 1]]);
    expect(series.find((s) => s.name === 'r')?.markLine?.data[0].xAxis).toBe(1);
  });
});

describe('evidenceChartOption', () => {
  it('charts the evidence window with the alert span', () => {
    const opt = evidenceChartOption({ metric: 'actor/grad_norm', firstStep: 3, lastStep: 5, severity: 'warning', evidence: { steps: [1, 2, 3, 4, 5], values: [1, 1, 9, null, 12] } }, { dark: true });
    const series = opt.series as S[];
    expect(series[0].markLine?.data[0].xAxis).toBe(3);
    expect(series.some((s) => s.type === 'scatter')).toBe(true);
  });
});

describe('axisLabel', () => {
  it('keeps tick labels short', () => {
    expect(axisLabel(0.0000012)).toBe('1.2e-6');
    expect(axisLabel(0.25)).toBe('0.25');
    expect(axisLabel(1234567)).toBe('1.2e+6');
    expect(axisLabel(0)).toBe('0');
  });
});

describe('few points', () => {
  it('shows dots for a run with a single step', () => {
    const opt = metricChartOption({ title: 't', unit: '', xName: 'step', theme: { dark: false }, lines: [{ name: 'r', color: '#000', x: [1], y: [0.5], smoothed: null, nonFinite: [] }] });
    expect((opt.series as { showSymbol: boolean }[])[0].showSymbol).toBe(true);
  });
});

describe('chart controls', () => {
  const base = { title: 'Grad norm', unit: 'actor/grad_norm', xName: 'step', theme: { dark: false } };
  const line = { name: 'r', color: '#000', x: [0, 1, 2, 3], y: [0, 2, -1, 400], smoothed: null, nonFinite: [] };
  it('labels the hovered x as "step 171", wall time in s/min/h and tokens with digit groups', () => {
    expect(xValueLabel('step', 171)).toBe('step 171');
    expect(xValueLabel('step', 170.9999)).toBe('step 171');
    expect(xValueLabel('wall', 42.25)).toBe('42.3 s');
    expect(xValueLabel('wall', 125)).toBe('2 min 5 s');
    expect(xValueLabel('wall', 7300)).toBe('2 h 1 min');
    expect(xValueLabel('tokens', 1234567)).toBe('1,234,567 tokens');
    const opt = metricChartOption({ ...base, lines: [line] }) as { xAxis: { axisPointer: { label: { formatter(p: { value: number }): string } } } };
    expect(opt.xAxis.axisPointer.label.formatter({ value: 171 })).toBe('step 171');
    const wall = metricChartOption({ ...base, xName: 'wall time (s)', lines: [line] }) as typeof opt;
    expect(wall.xAxis.axisPointer.label.formatter({ value: 90 })).toBe('1 min 30 s');
  });
  it('zooms the x-axis only, inside the chart', () => {
    const opt = metricChartOption({ ...base, lines: [line] }) as { dataZoom: { type: string; xAxisIndex: number; filterMode: string }[] };
    expect(opt.dataZoom).toHaveLength(1);
    expect(opt.dataZoom[0]).toMatchObject({ type: 'inside', xAxisIndex: 0, filterMode: 'none' });
  });
  it('drops values ≤ 0 from a log axis and says how many', () => {
    const { input, dropped } = forLogAxis({ ...base, lines: [line] });
    expect(dropped).toBe(2);
    expect(input.lines[0].y).toEqual([null, 2, null, 400]);
    const opt = metricChartOption({ ...base, lines: [line], logY: true }) as { yAxis: { type: string }; title: { subtext: string }; series: S[] };
    expect(opt.yAxis.type).toBe('log');
    expect(opt.title.subtext).toBe('actor/grad_norm · log scale · 2 values ≤ 0 not drawn');
    expect([...(opt.series[0].data as Float64Array)]).toEqual([0, NaN, 1, 2, 2, NaN, 3, 400]);
    const lin = metricChartOption({ ...base, lines: [line] }) as typeof opt;
    expect(lin.yAxis.type).toBe('value');
    expect(lin.title.subtext).toBe('actor/grad_norm');
  });
  it("shows a group's N at the hovered point in the band's tooltip", () => {
    const opt = metricChartOption({ ...base, lines: [], bands: [{ name: 'g', color: '#000', x: [0, 1], mean: [0.5, 0.25], lo: [0, 0], hi: [1, 1], n: [3, 2] }] }) as { series: { name: string; tooltip?: { valueFormatter?(v: unknown, i: number): string } }[] };
    const mean = opt.series.find((s) => s.name === 'g');
    expect(mean?.tooltip?.valueFormatter?.(0.25, 1)).toBe('0.25 · N=2');
    expect(mean?.tooltip?.valueFormatter?.(0.5, 0)).toBe('0.5 · N=3');
  });
});
