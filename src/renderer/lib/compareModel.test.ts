import { describe, expect, it } from 'vitest';
import type { RunRecord, Series } from '../../shared/api';
import {
  chartModel,
  indexSeries,
  legendEntries,
  mergeIndex,
  runColors,
  summaryRows,
  unitRange,
  visibleRunIds,
  xOfStep,
} from './compareModel';
import { PALETTE } from './chartOptions';

function rec(id: string, preset: string, alerts: RunRecord['alerts'] = []): RunRecord {
  return {
    id,
    name: id,
    tags: [],
    env: 'sokoban',
    preset,
    seed: 1,
    status: 'completed',
    step: 4,
    totalSteps: 4,
    createdAt: '',
    updatedAt: '',
    summary: {},
    alertCount: alerts.length,
    worstSeverity: null,
    config: { preset, seed: 1 },
    appVersion: '0',
    appCommit: 'x',
    backend: { training: 'cpu', rollout: 'tfjs', detail: '', available: [] },
    startedAt: null,
    finishedAt: null,
    error: null,
    alerts,
    wallSeconds: 0,
    etaSeconds: null,
  };
}
function ser(runId: string, key: string, y: (number | null)[], nonFinite: Series['nonFinite'] = []): Series {
  const steps = y.map((_, i) => i);
  return { runId, key, x: steps.map((s) => s * 10), y, steps, nonFinite, totalPoints: y.length };
}
const alert = (metric: string, severity: 'warning' | 'critical', firstStep: number) => ({
  id: `${metric}-${firstStep}`,
  runId: 'a',
  rule: 'rule',
  severity,
  metric,
  firstStep,
  lastStep: firstStep + 1,
  message: 'm',
  hint: 'h',
  evidence: { steps: [], values: [] },
  acknowledged: false,
});

describe('xOfStep', () => {
  it('maps a step to its x, or the nearest kept step', () => {
    const s = { steps: [0, 5, 10], x: [0, 50, 100] };
    expect(xOfStep(s, 5)).toBe(50);
    expect(xOfStep(s, 6)).toBe(50);
    expect(xOfStep(s, 9)).toBe(100);
  });
});

describe('chartModel', () => {
  const runs = [rec('a', 'sampo', [alert('actor/grad_norm', 'critical', 2)]), rec('b', 'grpo'), rec('c', 'sampo')];
  const idx = indexSeries([
    ser('a', 'k', [1, 2, null, 4], [{ step: 2, value: 'Infinity' }]),
    ser('b', 'k', [0, 0, 0, 0]),
    ser('c', 'k', [3, 4, 5, 6]),
    ser('a', 'actor/grad_norm', [1, 1, 1, 1]),
  ]);
  it('gives one line per run with smoothing and keeps non-finite points at their x', () => {
    const m = chartModel('k', runs, idx, { smoothing: 'ema', strength: 0.5, groupBy: '' });
    expect(m.lines.map((l) => l.name)).toEqual(['a', 'b', 'c']);
    expect(m.lines[0].smoothed?.[2]).toBeNull();
    expect(m.lines[0].nonFinite).toEqual([{ x: 20, step: 2, value: 'Infinity' }]);
    expect(m.bands).toEqual([]);
  });
  it("places alerts only on the chart of their metric (every chart with allAlerts), at the x of their step, in their run's colour", () => {
    const opts = { smoothing: 'none', strength: 0, groupBy: '' } as const;
    expect(chartModel('k', runs, idx, opts).alerts).toEqual([]);
    const color = chartModel('k', runs, idx, opts).lines[0].color;
    expect(chartModel('actor/grad_norm', runs, idx, opts).alerts).toEqual([
      { x: 20, xEnd: 30, label: 'rule', severity: 'critical', run: 'a', color },
    ]);
    expect(chartModel('k', runs, idx, { ...opts, allAlerts: true }).alerts).toEqual([
      { x: 20, xEnd: 30, label: 'rule', severity: 'critical', run: 'a', color },
    ]);
  });
  it('groups by a config key into bands with N in the name', () => {
    const m = chartModel('k', runs, idx, { smoothing: 'none', strength: 0, groupBy: 'preset' });
    expect(m.bands.map((b) => b.name)).toEqual(['preset = sampo (N=2)', 'preset = grpo (N=1)']);
    expect(m.bands[0].mean).toEqual([2, 3, 5, 5]);
    expect(m.bands[0].n).toEqual([2, 2, 1, 2]);
    expect(m.lines.every((l) => l.faint)).toBe(true);
  });
  it('colours grouped runs by their group, the same in the lines, the bands, the legend and the table', () => {
    const m = chartModel('k', runs, idx, { smoothing: 'none', strength: 0, groupBy: 'preset' });
    expect(m.lines.map((l) => l.color)).toEqual([PALETTE[0], PALETTE[1], PALETTE[0]]);
    expect(m.bands.map((b) => b.color)).toEqual([PALETTE[0], PALETTE[1]]);
    expect(legendEntries(runs, 'preset')).toEqual([
      { key: 'sampo', label: 'preset = sampo (N=2)', color: PALETTE[0] },
      { key: 'grpo', label: 'preset = grpo (N=1)', color: PALETTE[1] },
    ]);
    expect(summaryRows(runs, idx, 0.5, 'preset').map((r) => r.color)).toEqual([PALETTE[0], PALETTE[1], PALETTE[0]]);
    expect([...runColors(runs, '').values()]).toEqual([PALETTE[0], PALETTE[1], PALETTE[2]]);
  });
  it("names the runs a chart draws (its CSV's columns): all, minus a hidden run or a hidden group's runs", () => {
    expect(visibleRunIds(runs, '', new Set())).toEqual(['a', 'b', 'c']);
    expect(visibleRunIds(runs, '', new Set(['b']))).toEqual(['a', 'c']);
    expect(visibleRunIds(runs, 'preset', new Set(['sampo']))).toEqual(['b']);
    expect(visibleRunIds(runs, 'preset', new Set(['b']))).toEqual(['a', 'b', 'c']);
  });
  it('leaves out what the legend hid: a run, or a whole group with its band', () => {
    const byRun = chartModel('k', runs, idx, { smoothing: 'none', strength: 0, groupBy: '', hidden: new Set(['b']) });
    expect(byRun.lines.map((l) => l.name)).toEqual(['a', 'c']);
    const byGroup = chartModel('k', runs, idx, { smoothing: 'none', strength: 0, groupBy: 'preset', hidden: new Set(['sampo']) });
    expect(byGroup.lines.map((l) => l.name)).toEqual(['b']);
    expect(byGroup.bands.map((b) => b.name)).toEqual(['preset = grpo (N=1)']);
  });
  it("clips a ratio metric's band to 0…1", () => {
    const ratio = indexSeries([ser('a', 'r', [0, 0.95]), ser('c', 'r', [0.3, 1])]);
    const open = chartModel('r', runs, ratio, { smoothing: 'none', strength: 0, groupBy: 'preset' });
    expect(Math.min(...open.bands[0].lo)).toBeLessThan(0);
    const m = chartModel('r', runs, ratio, { smoothing: 'none', strength: 0, groupBy: 'preset' }, unitRange('ratio'));
    expect(Math.min(...m.bands[0].lo)).toBe(0);
    expect(Math.max(...m.bands[0].hi)).toBe(1);
    expect(unitRange('loss')).toBeNull();
  });
});

describe('summaryRows', () => {
  it('computes headline success, steps to threshold and a verdict per run', () => {
    const runs = [rec('a', 'sampo'), rec('b', 'grpo', [alert('actor/grad_norm', 'critical', 3)])];
    const idx = indexSeries([
      ser('a', 'episode/success_rate', [0.1, 0.3, 0.6, 0.7, 0.8, 0.8]),
      ser('b', 'episode/success_rate', [0.1, 0.2, 0.1, 0.0]),
    ]);
    const rows = summaryRows(runs, idx, 0.5);
    expect(rows[0].success.final).toBe(0.8);
    expect(rows[0].stepsToThreshold).toBe(2);
    expect(rows[0].verdict.level).toBe('stable');
    expect(rows[1].stepsToThreshold).toBeNull();
    expect(rows[1].verdict.level).toBe('collapsed');
    expect(rows[1].alerts.critical).toBe(1);
  });
  it('judges a success fall against the episodes of a step (rollout.tasksPerStep × groupSize), agreeing with an empty Alerts column', () => {
    const r = { ...rec('a', 'grpo'), config: { preset: 'grpo', seed: 1, rollout: { tasksPerStep: 4, groupSize: 4 } } };
    const idx = indexSeries([ser('a', 'episode/success_rate', [2 / 16, 5 / 16, 4 / 16, 2 / 16, 1 / 16, 1 / 16])]);
    const row = summaryRows([r], idx, 0.5)[0];
    expect(row.alerts).toEqual({ critical: 0, warning: 0, info: 0 });
    expect(row.verdict.level).toBe('stable');
    expect(row.verdict.reason).toContain('within sampling noise');
  });
  it('says "not checked" for a run the detector never read (a synthetic run, or detectedThrough null), stable once it has', () => {
    const idx = indexSeries([
      ser('s', 'episode/success_rate', [0.1, 0.3, 0.6, 0.7, 0.8]),
      ser('n', 'episode/success_rate', [0.1, 0.3, 0.6, 0.7, 0.8]),
      ser('c', 'episode/success_rate', [0.1, 0.3, 0.6, 0.7, 0.8]),
    ]);
    const synthetic = { ...rec('s', 'synthetic'), tags: ['synthetic'] };
    const never = { ...rec('n', 'grpo'), detectedThrough: null };
    const checked = { ...rec('c', 'grpo'), tags: ['synthetic'], detectedThrough: 4 };
    const rows = summaryRows([synthetic, never, checked], idx, 0.5);
    expect(rows.map((r) => [r.checkedThrough, r.verdict.level])).toEqual([
      [null, 'unchecked'],
      [null, 'unchecked'],
      [4, 'stable'],
    ]);
  });
  it('reads Final and Best success of a run that logs a task score and no success rate (an imported verl run) from episode/score_mean', () => {
    const verl = { ...rec('v', 'gae'), kind: 'imported' as const };
    const idx = indexSeries([
      ser('v', 'episode/score_mean', [0.301, 0.5, 0.874, 0.93]),
      ser('a', 'episode/success_rate', [0.2, 0.4]),
      ser('a', 'episode/score_mean', [0.9, 0.95]),
    ]);
    const [v, a] = summaryRows([verl, rec('a', 'sampo')], idx, 0.5);
    expect([v.successKey, v.success.final, v.success.best, v.success.bestStep]).toEqual(['episode/score_mean', 0.93, 0.93, 3]);
    expect(v.stepsToThreshold).toBe(1);
    // A run that logs a success rate keeps it, whatever else it logs.
    expect([a.successKey, a.success.final]).toEqual(['episode/success_rate', 0.4]);
  });
  it('counts a non-finite gradient norm as a collapse', () => {
    const idx = indexSeries([
      ser('a', 'episode/success_rate', [0.1, 0.1, 0.1, 0.1, 0.1]),
      ser('a', 'actor/grad_norm', [1, null, 1], [{ step: 1, value: 'NaN' }]),
    ]);
    expect(summaryRows([rec('a', 'sampo')], idx, 0.5)[0].verdict.reason).toBe('step 1: non-finite gradient norm or loss');
  });
});

describe('mergeIndex', () => {
  it('adds new metrics and keeps the maps of known ones', () => {
    const a = indexSeries([ser('a', 'k', [1])]);
    const b = indexSeries([ser('a', 'k', [9]), ser('a', 'j', [2])]);
    const m = mergeIndex(a, b);
    expect(m.get('k')).toBe(a.get('k'));
    expect(m.get('j')).toBe(b.get('j'));
  });
});
