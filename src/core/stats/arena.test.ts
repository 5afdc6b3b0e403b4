import { describe, expect, it } from 'vitest';
import type { MetricRecord } from '../../shared/metrics';
import { arenaCells, firstCriticalStep, trainingOutcome, type ArenaRunOutcome } from './arena';

function run(preset: string, seed: number, greedy: number, extra: Partial<ArenaRunOutcome> = {}): ArenaRunOutcome {
  return {
    env: 'sokoban',
    preset,
    seed,
    steps: 40,
    heldOutGreedy: greedy,
    heldOutSampled: greedy / 2,
    finalTrainSuccess: 0.4,
    bestTrainSuccess: 0.5,
    firstCriticalStep: null,
    stepsToThreshold: null,
    ...extra,
  };
}

describe('trainingOutcome and firstCriticalStep', () => {
  it('final, best and first step at the threshold from the metric stream (step 0 and NaN skipped)', () => {
    const recs: MetricRecord[] = [
      { step: 0, values: { 'episode/success_rate': 0.9 } },
      { step: 1, values: { 'episode/success_rate': 0.2 } },
      { step: 2, values: { 'episode/success_rate': 0.6 } },
      { step: 3, values: { 'episode/success_rate': 0.7 } },
      { step: 4, values: { 'episode/success_rate': 0.3 } },
      { step: 5, values: { 'episode/success_rate': Number.NaN } },
    ];
    expect(trainingOutcome(recs, 0.5)).toEqual({ finalTrainSuccess: 0.3, bestTrainSuccess: 0.7, stepsToThreshold: 2 });
    expect(trainingOutcome(recs, 0.95).stepsToThreshold).toBeNull();
  });

  it('the earliest critical alert only', () => {
    expect(
      firstCriticalStep([
        { severity: 'warning', firstStep: 3 },
        { severity: 'critical', firstStep: 9 },
        { severity: 'critical', firstStep: 7 },
      ]),
    ).toBe(7);
    expect(firstCriticalStep([{ severity: 'warning', firstStep: 3 }])).toBeNull();
  });
});

describe('arenaCells', () => {
  const runs = [
    ...[1, 2, 3, 4, 5].map((s) =>
      run('grpo', s, 0.1 * s, { firstCriticalStep: s === 2 ? 12 : null, stepsToThreshold: s % 2 ? 10 * s : null }),
    ),
    ...[1, 2, 3, 4, 5].map((s) => run('sampo', s, 0.1 * s + 0.3, { firstCriticalStep: s > 3 ? 20 + s : null })),
    ...[1, 2, 3, 4, 5].map((s) => run('gspo', s, 0.1 * s)),
  ];
  const cells = arenaCells(runs, { baseline: 'grpo', threshold: 0.5 });

  it('one cell per (env, preset) in first-seen order, the baseline without a comparison', () => {
    expect(cells.map((c) => c.preset)).toEqual(['grpo', 'sampo', 'gspo']);
    expect(cells[0].vsBaseline).toBeNull();
    expect(cells[0].seeds).toEqual([1, 2, 3, 4, 5]);
    expect(cells[0].heldOutGreedy.mean).toBeCloseTo(0.3, 12);
  });

  it('a constant +0.3 gap is better; identical runs are not separable', () => {
    expect(cells[1].vsBaseline!.verdict).toBe('better');
    expect(cells[1].vsBaseline!.diff).toBeCloseTo(0.3, 12);
    expect(cells[1].vsBaselineSampled!.diff).toBeCloseTo(0.15, 12);
    expect(cells[2].vsBaseline!.verdict).toBe('not separable at 5 seeds');
  });

  it('stability and threshold figures', () => {
    expect(cells[0].criticalAlertShare).toBe(0.2);
    expect(cells[0].firstCriticalStep).toBe(12);
    expect(cells[1].criticalAlertShare).toBe(0.4);
    expect(cells[1].firstCriticalStep).toBe(24);
    expect(cells[0].stepsToThreshold).toEqual({ threshold: 0.5, reached: 3, of: 5, mean: (10 + 30 + 50) / 3 });
  });

  it('pairs by seed, not by position', () => {
    const shuffled = arenaCells([runs[10 - 1], ...runs.slice(0, 9), ...runs.slice(10)].reverse(), { baseline: 'grpo', threshold: 0.5 });
    const sampo = shuffled.find((c) => c.preset === 'sampo')!;
    expect(sampo.vsBaseline!.diff).toBeCloseTo(0.3, 12);
    expect(sampo.vsBaseline!.sd).toBeCloseTo(0, 12);
  });

  it('a duplicated (env, preset, seed) is refused', () => {
    expect(() => arenaCells([run('grpo', 1, 0.1), run('grpo', 1, 0.2)], { baseline: 'grpo', threshold: 0.5 })).toThrow(
      /grpo on sokoban has seed 1 twice/,
    );
  });
});
