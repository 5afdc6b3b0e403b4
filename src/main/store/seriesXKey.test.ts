/** runs.metrics xKey: any logged key as the x-axis (an epoch counter, a token count a source logged). */
import { expect, it } from 'vitest';
import { buildSeries } from './runStore';
import type { MetricRecord } from '../../shared/metrics';

it("puts each point at the x key's value of the same step, leaving out steps without it", () => {
  const rows: MetricRecord[] = [
    { step: 1, values: { 'actor/entropy': 0.5, 'training/epoch': 0 } },
    { step: 2, values: { 'actor/entropy': 0.4, 'training/epoch': 0.5 } },
    { step: 3, values: { 'actor/entropy': 0.3 } },
    { step: 4, values: { 'actor/entropy': 0.2, 'training/epoch': 1.5 } },
  ];
  const s = buildSeries('r', 'actor/entropy', rows, { xAxis: 'step', xKey: 'training/epoch' });
  expect(s.x).toEqual([0, 0.5, 1.5]);
  expect(s.y).toEqual([0.5, 0.4, 0.2]);
  expect(s.steps).toEqual([1, 2, 4]);
  expect(buildSeries('r', 'actor/entropy', rows, { xAxis: 'step' }).x).toEqual([1, 2, 3, 4]);
});
