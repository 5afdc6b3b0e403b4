/**
 * The ladder's printed and stored forms (pure): the table's columns, the summary rows and the README, for a ladder
 * of presets and one of arms; and the per-run means the rows are made of.
 */
import { describe, expect, it } from 'vitest';
import { ladderRows, type LadderRunOutcome } from '../../../core/stats/index';
import type { Arm } from './arms';
import { formatLadder, ladderReadme, ladderSummary, meanOverSteps, meanRolloutSeconds, type LadderPlan } from './ladder';
import { testLadderPlan } from '../../testing/ladderPlan';

const seeds = [1, 2, 3];
const outcome = (o: Partial<LadderRunOutcome> & { seed: number }): LadderRunOutcome => ({
  env: 'sokoban',
  preset: 'sampo',
  level: 2,
  lastStep: 40,
  collapseStep: null,
  heldOut: 0.5,
  ...o,
});

const plan = (arms: LadderPlan['arms']): LadderPlan =>
  testLadderPlan({
    command: 'arlarena ladder …',
    levels: [2],
    presets: ['sampo'],
    seeds,
    steps: 40,
    baseline: arms ? arms[0].name : 'sampo',
    episodes: 50,
    arms,
  });

describe('per-run means over the RL steps', () => {
  it('leave out step 0 (the validation row) and steps without a finite value; null when no step has one', () => {
    const metrics: Array<{ step: number; values: Record<string, number> }> = [
      { step: 0, values: { 'perf/rollout_s': 9, 'mismatch/logprob_abs_mean': 9 } },
      { step: 1, values: { 'perf/rollout_s': 1, 'mismatch/logprob_abs_mean': 0.002 } },
      { step: 2, values: { 'perf/rollout_s': Number.NaN } },
      { step: 3, values: { 'perf/rollout_s': 2, 'mismatch/logprob_abs_mean': 0.004 } },
    ];
    expect(meanRolloutSeconds(metrics)).toBe(1.5);
    expect(meanOverSteps(metrics, 'mismatch/logprob_abs_mean')).toBeCloseTo(0.003, 15);
    expect(meanOverSteps(metrics, 'no/such_key')).toBeNull();
    expect(meanRolloutSeconds([{ step: 0, values: { 'perf/rollout_s': 1 } }])).toBeNull();
  });
});

describe('table, summary and README', () => {
  it('a ladder of presets without engine-gap figures: no arm column, no gap column', () => {
    const rows = ladderRows(
      seeds.map((seed) => outcome({ seed, rolloutSeconds: 0.5 })),
      { baseline: 'sampo' },
    );
    const table = formatLadder(rows);
    expect(table.split('\n')[0]).toMatch(/^env\s+level\s+preset\s+seeds .*held-out of survivors\s+rollout s\/step$/);
    expect(table).toContain('0.50');
    const summary = ladderSummary('x', plan(null), rows);
    expect(summary.arms).toBeNull();
    expect(summary.rows[0]).toMatchObject({ rolloutSecondsPerStep: { n: 3, mean: 0.5 }, rolloutMismatch: { n: 0, mean: null } });
    expect(summary.onCollapse).toMatch(/^stop: /);
  });

  it('a ladder of arms: the arm column, the speed-up beside the rollout time, the engine gap; the README lists the arms', () => {
    const arms: Arm[] = [
      { name: 'fp32', preset: 'sampo', sets: {}, vs: null },
      { name: 'int8', preset: 'sampo', sets: { 'compute.rolloutPrecision': 'int8' }, vs: 'fp32' },
    ];
    const outcomes = [
      ...seeds.map((seed) => outcome({ seed, arm: 'fp32', rolloutSeconds: 2, rolloutMismatch: 2e-7 })),
      ...seeds.map((seed) =>
        outcome({ seed, arm: 'int8', rolloutSeconds: 1, rolloutMismatch: 4e-4, collapseStep: seed === 1 ? 12 : null }),
      ),
    ];
    const rows = ladderRows(outcomes, { baseline: 'fp32', vs: { fp32: null, int8: 'fp32' } });
    const lines = formatLadder(rows).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^env\s+level\s+arm\s+preset\s+seeds .*rollout s\/step\s+rollout \|Δ log p\|$/);
    expect(lines[2]).toMatch(/^sokoban\s+2\s+fp32\s+sampo\s+3\s+0 % .*baseline .*2\.00\s+2\.0e-7$/);
    expect(lines[3]).toMatch(/^sokoban\s+2\s+int8\s+sampo\s+3\s+33 % .*vs fp32: not separable \(p .*1\.00 \(×2\.00\)\s+0\.00040$/);
    // The speed-up beside a time read as "2× slower" without saying which way it divides (new-user walkthrough).
    expect(lines.at(-1)).toBe(
      "(×N) beside rollout s/step: the baseline's seconds per step ÷ this row's (above 1: this row's rollouts are faster)",
    );
    expect(
      formatLadder(
        ladderRows(
          seeds.map((seed) => outcome({ seed })),
          { baseline: 'sampo' },
        ),
      ),
    ).not.toContain('(×N)');
    const summary = ladderSummary('mm', plan(arms), rows);
    expect(summary.rows[1]).toMatchObject({ arm: 'int8', vsBaseline: { against: 'fp32', rolloutSpeedup: 2 }, rolloutMismatch: { n: 3 } });
    expect(summary.mismatch).toMatch(/^rolloutMismatch: each run's mean mismatch\/logprob_abs_mean/);
    const readme = ladderReadme('mm', plan(arms), rows);
    expect(readme).toContain('| int8 | sampo | `compute.rolloutPrecision=int8` | fp32 |');
    expect(readme).toContain('`int8=sampo;compute.rolloutPrecision=int8 vs fp32`');
    expect(readme).toMatch(/Rollout \|Δ log p\| \(where shown\): rolloutMismatch/);
  });
  it('a row whose baseline has no runs says so in the table, summary and README instead of reading "baseline"', () => {
    const rows = ladderRows(
      seeds.map((seed) => outcome({ seed })),
      { baseline: 'sampo' },
    );
    const p = plan(null);
    const other = ladderRows(
      seeds.map((seed) => outcome({ seed, preset: 'gspo' })),
      { baseline: 'sampo' },
    );
    expect(formatLadder(rows).split('\n')[2]).toMatch(/\s{2}baseline\s{2}/);
    const line = formatLadder(other).split('\n')[2];
    expect(line).not.toMatch(/\s{2}baseline\s{2}/);
    expect(line).toContain('no runs of baseline sampo');
    expect(ladderSummary('x', p, other).rows[0]).toMatchObject({ vsBaseline: null, baselineMissing: 'sampo' });
    expect('baselineMissing' in ladderSummary('x', p, rows).rows[0]).toBe(false);
    expect(ladderReadme('x', p, other)).toContain('no runs of baseline sampo');
  });
});
