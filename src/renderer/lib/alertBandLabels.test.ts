/**
 * Eight separate grad-norm spikes on one chart (verl Qwen2.5-0.5B, ../shared/data/real-runs 1a: 66 at step 16,
 * 15–18 at steps 25–328) drew eight "warning · grad_norm_spike" labels that overlapped into a smear. Only the worst band is labelled now; every band's tooltip lists them all.
 */
import { describe, expect, it } from 'vitest';
import { alertBands, bandLabels, metricChartOption, type AlertMark } from './chartOptions';

const SPIKES: Array<[number, number]> = [
  [16, 65.958],
  [25, 16.466],
  [33, 18.45],
  [42, 11.129],
  [86, 15.884],
  [159, 15.613],
  [175, 15.224],
  [328, 18.333],
];
const marks: AlertMark[] = SPIKES.map(([step, value]) => ({
  x: step,
  xEnd: step,
  label: 'grad_norm_spike',
  severity: 'warning',
  run: 'r',
  color: '#4e79a7',
  weight: value,
}));

describe('alert band labels: one per rule, on the worst', () => {
  it('labels only the tallest of eight grad-norm spikes, and lists all eight in the tooltip', () => {
    const labels = bandLabels(alertBands(marks, 1));
    expect(labels.filter((l) => l.text !== null)).toEqual([{ text: 'warning · grad_norm_spike (worst of 8)', tip: expect.any(String) }]);
    expect(labels[0].text).toBe('warning · grad_norm_spike (worst of 8)');
    expect(labels[0].tip).toBe(
      'grad_norm_spike: 8 alerts, at step 16, step 25, step 33, step 42, step 86, step 159, step 175, step 328; the label marks the worst, step 16 (66)',
    );
    expect(new Set(labels.map((l) => l.tip)).size).toBe(1);
  });

  it('a critical band outranks a taller warning; different rules keep their own labels', () => {
    const bands = alertBands(
      [
        ...marks.slice(0, 2),
        { x: 200, xEnd: 210, label: 'grad_norm_spike', severity: 'critical', run: 'r', weight: 20 },
        { x: 300, xEnd: 300, label: 'kl_drift', severity: 'warning', run: 'r' },
      ],
      1,
    );
    expect(bandLabels(bands).map((l) => l.text)).toEqual([null, null, 'critical · grad_norm_spike (worst of 3)', 'warning · kl_drift']);
  });

  it('the chart draws the labels so: one shown, seven hidden, each band named for its tooltip', () => {
    const x = Array.from({ length: 400 }, (_, i) => i);
    const opt = metricChartOption({
      title: 't',
      unit: '',
      xName: 'step',
      theme: { dark: false },
      lines: [{ name: 'r', color: '#4e79a7', x, y: x.map(() => 2), smoothed: null, nonFinite: [] }],
      alerts: marks,
    }) as unknown as {
      series: { markArea?: { silent: boolean; data: [{ name: string; label: { show: boolean; formatter: string } }, unknown][] } }[];
    };
    const area = opt.series[0].markArea!;
    expect(area.silent).toBe(false);
    expect(area.data.filter((d) => d[0].label.show).map((d) => d[0].label.formatter)).toEqual(['warning · grad_norm_spike (worst of 8)']);
    expect(area.data.every((d) => d[0].name.startsWith('grad_norm_spike: 8 alerts'))).toBe(true);
  });
});
