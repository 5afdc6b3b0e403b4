import { describe, expect, it } from 'vitest';
import {
  alertBands,
  axisLabel,
  evidenceChartOption,
  evidenceLine,
  forLogAxis,
  isSparse,
  labelSide,
  metricChartOption,
  stepTickLabel,
  xValueLabel,
} from './chartOptions';

type S = { name: string; type: string; data: ArrayLike<unknown>; markLine?: { data: { xAxis: number }[] } };

describe('metricChartOption', () => {
  const base = { title: 'Success', unit: 'ratio', xName: 'step', theme: { dark: false } };
  it('draws raw faintly behind the smoothed curve and marks non-finite points', () => {
    const opt = metricChartOption({
      ...base,
      lines: [
        {
          name: 'run1',
          color: '#000',
          x: [0, 1, 2],
          y: [0.1, null, 0.3],
          smoothed: [0.1, null, 0.2],
          nonFinite: [{ x: 1, step: 1, value: 'NaN' }],
        },
      ],
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
      lines: [
        {
          name: 'r',
          color: '#000',
          x: [0, 1, 2, 3],
          y,
          smoothed: null,
          nonFinite: [
            { x: 0, step: 0, value: 'NaN' },
            { x: 1, step: 1, value: 'Infinity' },
            { x: 2, step: 2, value: 'NaN' },
          ],
        },
      ],
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
    expect(series[1].data).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(series.find((s) => s.name === 'r')?.markLine?.data[0].xAxis).toBe(1);
  });
});

describe('step axis under zoom', () => {
  it('labels integer steps only, so a zoom window edge (2.6, 6.4) does not repeat the next tick ("3 3 … 6 6")', () => {
    const opt = metricChartOption({
      title: 't',
      unit: 'u',
      xName: 'step',
      xKind: 'step',
      theme: { dark: false },
      lines: [{ name: 'r', color: '#000', x: [0, 10], y: [1, 2], smoothed: null, nonFinite: [] }],
    });
    const fmt = (opt.xAxis as { axisLabel: { formatter: (v: number) => string } }).axisLabel.formatter;
    const labels = [2.6, 3, 4, 5, 6, 6.4].map(fmt).filter((l) => l !== '');
    expect(labels).toEqual(['3', '4', '5', '6']);
    expect(new Set(labels).size).toBe(labels.length);
    expect(stepTickLabel(1200)).toBe(axisLabel(1200));
  });
});

describe('evidenceChartOption', () => {
  it('charts the evidence window with the alert span', () => {
    const opt = evidenceChartOption(
      {
        metric: 'actor/grad_norm',
        firstStep: 3,
        lastStep: 5,
        severity: 'warning',
        evidence: { steps: [1, 2, 3, 4, 5], values: [1, 1, 9, null, 12] },
      },
      { dark: true },
    );
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
    const opt = metricChartOption({
      title: 't',
      unit: '',
      xName: 'step',
      theme: { dark: false },
      lines: [{ name: 'r', color: '#000', x: [1], y: [0.5], smoothed: null, nonFinite: [] }],
    });
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
    const opt = metricChartOption({ ...base, lines: [line] }) as {
      xAxis: { axisPointer: { label: { formatter(p: { value: number }): string } } };
    };
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
    const opt = metricChartOption({ ...base, lines: [line], logY: true }) as {
      yAxis: { type: string };
      title: { subtext: string };
      series: S[];
    };
    expect(opt.yAxis.type).toBe('log');
    expect(opt.title.subtext).toBe('actor/grad_norm · log scale · 2 values ≤ 0 not drawn');
    expect([...(opt.series[0].data as Float64Array)]).toEqual([0, NaN, 1, 2, 2, NaN, 3, 400]);
    const lin = metricChartOption({ ...base, lines: [line] }) as typeof opt;
    expect(lin.yAxis.type).toBe('value');
    expect(lin.title.subtext).toBe('actor/grad_norm');
  });
  it("shows a group's N at the hovered point in the band's tooltip", () => {
    const opt = metricChartOption({
      ...base,
      lines: [],
      bands: [{ name: 'g', color: '#000', x: [0, 1], mean: [0.5, 0.25], lo: [0, 0], hi: [1, 1], n: [3, 2] }],
    }) as { series: { name: string; tooltip?: { valueFormatter?(v: unknown, i: number): string } }[] };
    const mean = opt.series.find((s) => s.name === 'g');
    expect(mean?.tooltip?.valueFormatter?.(0.25, 1)).toBe('0.25 · N=2');
    expect(mean?.tooltip?.valueFormatter?.(0.5, 0)).toBe('0.5 · N=3');
  });
});

describe('alert marks', () => {
  type Area = [
    { xAxis: number; itemStyle: { color: string }; label: { formatter: string; position: string; offset: number[] } },
    { xAxis: number },
  ];
  type Opt = {
    series: {
      name: string;
      type: string;
      markLine?: { data: { xAxis?: number; yAxis?: number; label: { formatter?: string; position?: string } }[] };
      markArea?: { data: Area[] };
      label?: { position: string; formatter: string };
    }[];
    yAxis: { min?(e: { min: number }): number; max?(e: { max: number }): number };
    dataZoom: { startValue?: number; endValue?: number }[];
  };
  const x = Array.from({ length: 101 }, (_, i) => i);
  const line = { name: 'r', color: '#4e79a7', x, y: x.map((v) => v / 100), smoothed: null, nonFinite: [] };
  const base = { title: 't', unit: '', xName: 'step', theme: { dark: false }, lines: [line] };

  it("merges one run's overlapping alerts into one band in the run's colour, and keeps runs apart", () => {
    const bands = alertBands(
      [
        { x: 10, xEnd: 30, label: 'grad_norm_spike', severity: 'warning', run: 'a', color: '#111' },
        { x: 20, xEnd: 40, label: 'validity_drop', severity: 'critical', run: 'a', color: '#111' },
        { x: 25, xEnd: 25, label: 'kl_drift', severity: 'warning', run: 'a', color: '#111' },
        { x: 70, xEnd: 70, label: 'kl_drift', severity: 'warning', run: 'a', color: '#111' },
        { x: 15, xEnd: 35, label: 'grad_norm_spike', severity: 'warning', run: 'b', color: '#222' },
      ],
      1,
    );
    expect(bands).toEqual([
      { run: 'a', color: '#111', from: 10, to: 40, severity: 'critical', label: 'grad_norm_spike +2', count: 3 },
      { run: 'a', color: '#111', from: 70, to: 70, severity: 'warning', label: 'kl_drift', count: 1 },
      { run: 'b', color: '#222', from: 15, to: 35, severity: 'warning', label: 'grad_norm_spike', count: 1 },
    ]);
  });

  it("draws one shaded band and one line per band (not per alert), a one-step alert as its step's width", () => {
    const alerts = ['a', 'b', 'c', 'd'].map((rule, i) => ({
      x: 50 + i,
      xEnd: 60,
      label: rule,
      severity: 'critical' as const,
      run: 'r',
      color: '#4e79a7',
    }));
    const opt = metricChartOption({
      ...base,
      alerts: [...alerts, { x: 5, xEnd: 5, label: 'non_finite', severity: 'warning', run: 'r', color: '#4e79a7' }],
    }) as unknown as Opt;
    const raw = opt.series[0];
    expect(raw.markArea?.data).toHaveLength(2);
    expect(raw.markLine?.data).toHaveLength(2);
    const [one, many] = raw.markArea!.data;
    expect([one[0].xAxis, one[1].xAxis]).toEqual([4.5, 5.5]);
    expect(many[0].itemStyle.color).toBe('#4e79a7');
    expect(many[0].label.formatter).toBe('critical · a +3');
  });

  it('anchors labels on the side facing the middle, so none runs past the chart edge', () => {
    expect(labelSide(90, [0, 100])).toBe('left');
    expect(labelSide(10, [0, 100])).toBe('right');
    const opt = metricChartOption({
      ...base,
      alerts: [
        { x: 2, xEnd: 6, label: 'early', severity: 'warning', run: 'r', color: '#000' },
        { x: 95, xEnd: 100, label: 'late', severity: 'warning', run: 'r', color: '#000' },
      ],
    }) as unknown as Opt;
    const [early, late] = opt.series[0].markArea!.data;
    expect(early[0].label.position).toBe('insideTopLeft');
    expect(late[0].label.position).toBe('insideTopRight');
    // A second run's labels go on a row below the first's.
    const two = metricChartOption({
      ...base,
      alerts: [
        { x: 2, xEnd: 6, label: 'a', severity: 'warning', run: 'r1', color: '#000' },
        { x: 2, xEnd: 6, label: 'b', severity: 'warning', run: 'r2', color: '#fff' },
      ],
    }) as unknown as Opt;
    expect(two.series[0].markArea!.data.map((d) => d[0].label.offset[1])).toEqual([0, 13]);
  });

  it('opens zoomed to a window with a marker at the step', () => {
    const opt = metricChartOption({ ...base, zoom: { from: 30, to: 50, id: 'f1' }, cursor: 40 }) as unknown as Opt;
    expect(opt.dataZoom[0]).toMatchObject({ startValue: 30, endValue: 50 });
    expect(opt.series[0].markLine?.data).toEqual([expect.objectContaining({ xAxis: 40 })]);
    const plain = metricChartOption(base) as unknown as Opt;
    expect(plain.dataZoom[0].startValue).toBeUndefined();
    expect(plain.series[0].markLine).toBeUndefined();
  });
});

describe('evidence chart', () => {
  type Opt = {
    series: {
      name: string;
      type: string;
      data: unknown;
      markLine?: { data: { xAxis?: number; yAxis?: number; label: { formatter?: string } }[] };
      label?: { position: string };
    }[];
    yAxis: { min(e: { min: number }): number | null; max(e: { max: number }): number | null };
  };
  const alert = {
    metric: 'episode/valid_format_ratio',
    rule: 'validity_drop',
    firstStep: 120,
    lastStep: 200,
    severity: 'critical' as const,
    evidence: {
      steps: [44, 45, 46, 47, 48, 110, 111, 112, 198, 199, 200],
      values: [0.97, 0.98, 0.99, 0.98, 0.97, 0.9, 0.8, 0.7, 0.1, 0.05, 0],
    },
    peak: { step: 46, value: 0.99 },
    threshold: 0.84,
  };

  it('draws the threshold as a line the y-axis reaches, and names the cited peak at its step', () => {
    const opt = evidenceChartOption(alert, { dark: false }) as unknown as Opt;
    const level = opt.series[0].markLine?.data.find((d) => d.yAxis !== undefined);
    expect(level?.yAxis).toBe(0.84);
    expect(level?.label.formatter).toBe('threshold 0.84');
    // A threshold beyond every value (a spike's threshold under a calm window) still shows; inside the data's
    // span, ECharts keeps its own rounded bound (null).
    expect(opt.yAxis.max({ max: 0.5 })).toBe(0.84);
    expect(opt.yAxis.min({ min: 0.9 })).toBe(0.84);
    expect(opt.yAxis.max({ max: 0.99 })).toBeNull();
    expect(opt.yAxis.min({ min: 0 })).toBeNull();
    const peak = opt.series.find((s) => s.type === 'scatter' && s.name === '0.99 at step 46');
    expect(peak?.data).toEqual([[46, 0.99]]);
    expect(peak?.label?.position).toBe('right');
  });

  it("puts the alert's label at the band's bottom when the value it cites sits high inside the band, else at its top", () => {
    type Band = { series: { markArea?: { data: { label: { position: string } }[][] } }[] };
    const spike = {
      metric: 'actor/grad_norm',
      rule: 'grad_norm_spike',
      firstStep: 183,
      lastStep: 300,
      severity: 'critical' as const,
      evidence: { steps: [150, 160, 170, 180, 190, 200, 300], values: [0.5, 0.5, 0.5, 0.6, 6000, 6400, 6430] },
      peak: { step: 300, value: 6430 },
      threshold: 2.5,
    };
    const position = (a: typeof spike | typeof alert) =>
      (evidenceChartOption(a, { dark: false }) as unknown as Band).series[0].markArea!.data[0][0].label.position;
    // The grad-norm peak at the band's top right: the label moves to the bottom, on the same side.
    expect(position(spike)).toBe('insideBottomRight');
    // The validity drop cites its best value before the band: the label stays at the top.
    expect(position(alert)).toBe('insideTopRight');
    // A cited value low in the band (entropy collapsed to ~0) leaves the top free.
    expect(
      position({
        ...spike,
        evidence: { ...spike.evidence, values: [1.2, 1.2, 1.1, 1.1, 0.01, 0.005, 0.001] },
        peak: { step: 300, value: 0.001 },
      }),
    ).toBe('insideTopRight');
  });

  it('breaks the line where the detector skipped steps instead of drawing a slope through them', () => {
    const { x, y } = evidenceLine(alert.evidence.steps, alert.evidence.values);
    expect(x).toEqual([44, 45, 46, 47, 48, 79, 110, 111, 112, 155, 198, 199, 200]);
    expect(y[5]).toBeNull();
    expect(y[9]).toBeNull();
    expect(y.filter((v) => v === null)).toHaveLength(2);
  });

  it("names a threshold that runs along the plot's floor above its line, and lifts a bottom band label off it", () => {
    type Marks = {
      series: {
        markLine?: { data: { yAxis?: number; label: { position: string } }[] };
        markArea?: { data: { label?: { offset: number[]; position: string } }[][] };
      }[];
    };
    const runaway = {
      metric: 'response_length/mean',
      rule: 'length_runaway',
      firstStep: 124,
      lastStep: 200,
      severity: 'warning' as const,
      evidence: { steps: [114, 120, 130, 140, 200], values: [15, 16, 56, 96, 336] },
      peak: { step: 200, value: 336 },
      threshold: 23.9,
    };
    const opt = evidenceChartOption(runaway, { dark: false }) as unknown as Marks;
    expect(opt.series[0].markLine!.data.find((d) => d.yAxis === 23.9)!.label.position).toBe('insideStartTop');
    const band = opt.series[0].markArea!.data[0][0].label!;
    expect(band.position).toBe('insideBottomRight');
    expect(band.offset).toEqual([0, -13]);
    // A threshold high in the range keeps its label under the line, and the band label its place.
    const drop = evidenceChartOption({ ...runaway, threshold: 300 }, { dark: false }) as unknown as Marks;
    expect(drop.series[0].markLine!.data.find((d) => d.yAxis === 300)!.label.position).toBe('insideStartBottom');
    expect(drop.series[0].markArea!.data[0][0].label!.offset).toEqual([0, 0]);
  });

  it('shades and names the stretches the evidence window left out, counting steps only when every step was logged', () => {
    type Areas = { series: { markArea?: { data: { xAxis: number; label?: { formatter: string } }[][] } }[] };
    const areas = (a: typeof alert) =>
      (evidenceChartOption(a, { dark: false }) as unknown as Areas).series[0].markArea!.data.filter((d) =>
        d[0].label?.formatter.includes('not kept'),
      );
    const everyStep = { ...alert, evidence: { steps: [114, 115, 116, 117, 143, 191, 192, 193], values: [1, 2, 3, 4, 5, 6, 7, 8] } };
    expect(evidenceLine(everyStep.evidence.steps, everyStep.evidence.values).skipped).toEqual([
      { from: 117, to: 143, label: '25 steps\nnot kept' },
      { from: 143, to: 191, label: '47 steps\nnot kept' },
    ]);
    expect(areas(everyStep).map((d) => [d[0].xAxis, d[1].xAxis, d[0].label!.formatter])).toEqual([
      [117, 143, '25 steps\nnot kept'],
      [143, 191, '47 steps\nnot kept'],
    ]);
    const everyTen = { ...alert, evidence: { steps: [10, 20, 30, 40, 300, 310, 320], values: [1, 2, 3, 4, 5, 6, 7] } };
    expect(areas(everyTen).map((d) => d[0].label!.formatter)).toEqual(['steps\nnot kept']);
    const whole = { ...alert, evidence: { steps: [1, 2, 3, 4, 5], values: [1, 2, 3, 4, 5] } };
    expect(areas(whole)).toEqual([]);
  });

  it('does not mark validation gaps of an alert stored before they were left out as non-finite', () => {
    const opt = evidenceChartOption(
      {
        metric: 'val/success_rate',
        firstStep: 30,
        lastStep: 30,
        severity: 'warning',
        evidence: { steps: [10, 11, 20, 21, 30], values: [0.6, null, 0.6, null, 0.1] },
      },
      { dark: false },
    ) as unknown as Opt;
    expect(opt.series.some((s) => s.name.endsWith('non-finite'))).toBe(false);
  });
});
