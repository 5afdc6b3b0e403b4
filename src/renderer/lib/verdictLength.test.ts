/**
 * Compare's verdict on imported runs that log no success rate: a verl console log resumed at step
 * 101 (335 steps) and two runs of a W&B CSV export (2,958 and 4,595 steps) were called "Too short: too short to
 * judge: 0 logged steps". The label says "Too short" once; the reason counts the run's own steps; a long run
 * without a success series is judged on its alerts and the detector, and says it logs no success rate.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord, Series } from '../../shared/api';
import { indexSeries, summaryRows } from './compareModel';
import { verdict } from './summary';

function rec(id: string, step: number): RunRecord {
  return {
    id,
    name: id,
    kind: 'imported',
    tags: [],
    env: 'gsm8k',
    preset: 'imported',
    seed: 0,
    status: 'completed',
    step,
    totalSteps: step,
    createdAt: '',
    updatedAt: '',
    summary: {},
    alertCount: 0,
    worstSeverity: null,
    config: {},
    appVersion: '0',
    appCommit: 'x',
    detectedThrough: step,
    backend: { training: 'cpu', rollout: 'tfjs', detail: '', available: [] },
    startedAt: null,
    finishedAt: null,
    error: null,
    alerts: [],
    wallSeconds: 0,
    etaSeconds: null,
  };
}
/** A series downsampled to `kept` points of a run that logged `total`. */
function ser(runId: string, key: string, first: number, total: number, kept = 50): Series {
  const steps = Array.from({ length: kept }, (_, i) => first + Math.round((i * (total - 1)) / (kept - 1)));
  return { runId, key, x: steps, y: steps.map(() => 0.1), steps, nonFinite: [], totalPoints: total };
}

describe('Compare verdict on runs that log no success rate', () => {
  it('a verl log resumed at step 101 (335 steps) and W&B runs of 2,958 and 4,595 steps are not "too short"', () => {
    const runs = [rec('verl', 435), rec('deep', 2958), rec('base', 4595)];
    const idx = indexSeries([
      ser('verl', 'actor/entropy', 101, 335),
      ser('deep', 'actor/entropy', 1, 2958),
      ser('base', 'actor/entropy', 1, 4595),
    ]);
    const rows = summaryRows(runs, idx, 0.5);
    expect(rows.map((r) => r.verdict.level)).toEqual(['stable', 'stable', 'stable']);
    expect(rows.map((r) => r.verdict.reason)).toEqual([
      'no alerts, finite gradients over 335 logged steps; no success rate logged, so no fall in success to judge',
      'no alerts, finite gradients over 2,958 logged steps; no success rate logged, so no fall in success to judge',
      'no alerts, finite gradients over 4,595 logged steps; no success rate logged, so no fall in success to judge',
    ]);
    for (const r of rows) expect(r.verdict.reason).not.toMatch(/too short/i);
  });

  it('a run that really is short says its own step count once, without repeating the label', () => {
    const rows = summaryRows([rec('s', 3)], indexSeries([ser('s', 'actor/entropy', 1, 3, 3)]), 0.5);
    expect(rows[0].verdict).toEqual({ level: 'too-early', reason: '3 logged steps' });
    expect(verdict({ success: { steps: [0], y: [0.1] }, alerts: [], nonFiniteSteps: [] })).toEqual({
      level: 'too-early',
      reason: '1 logged success point',
    });
  });

  it('a long run never checked by the detector is "not checked", and says it logs no success rate', () => {
    const r = { ...rec('verl', 435), detectedThrough: null };
    const row = summaryRows([r], indexSeries([ser('verl', 'actor/entropy', 101, 335)]), 0.5)[0];
    expect(row.verdict.level).toBe('unchecked');
    expect(row.verdict.reason).toContain('(no success rate logged)');
  });
});
