import { describe, expect, it } from 'vitest';
import { ladderRows, type LadderRunOutcome } from './ladder';

const run = (preset: string, level: number, seed: number, collapseStep: number | null, heldOut = 0.5): LadderRunOutcome => ({
  env: 'sokoban',
  preset,
  level,
  seed,
  lastStep: 40,
  collapseStep,
  heldOut,
});
const seeds = [1, 2, 3, 4, 5, 6, 7, 8];

describe('ladder rows', () => {
  it('identical presets are not separable; all-collapse against none is significant, in the right direction', () => {
    const outcomes = [
      ...seeds.map((s) => run('grpo', 2, s, s % 2 ? 10 + s : null)),
      ...seeds.map((s) => run('gspo', 2, s, s % 2 ? 10 + s : null)),
      ...seeds.map((s) => run('grpo', 4, s, null, 0.6)),
      ...seeds.map((s) => run('cispo', 4, s, 5)),
    ];
    const rows = ladderRows(outcomes, { baseline: 'grpo' });
    expect(rows.map((r) => [r.level, r.preset])).toEqual([
      [2, 'grpo'],
      [2, 'gspo'],
      [4, 'grpo'],
      [4, 'cispo'],
    ]);
    const [g2, s2, g4, c4] = rows;
    expect(g2.vsBaseline).toBeNull();
    expect(s2.vsBaseline).toMatchObject({ verdict: 'not separable' });
    expect(s2.vsBaseline!.logRankP).toBeCloseTo(1, 12);
    expect(s2.collapsedShare.mean).toBe(0.5);
    expect(s2.medianCollapseStep).toBe(17); // the KM curve reaches ½ at the fourth collapse (11, 13, 15, 17)
    // 8 of 8 collapse at step 5 against 0 of 8: χ² = 15 → p ≈ 1.1e-4
    expect(c4.vsBaseline!.verdict).toBe('collapses more');
    expect(c4.vsBaseline!.logRankP).toBeLessThan(0.001);
    expect(c4.collapsedShare.mean).toBe(1);
    expect(c4.collapsedShare.ci95![0]).toBeCloseTo(0.025 ** (1 / 8), 10);
    expect(c4.survival).toEqual([
      [0, 1],
      [5, 0],
    ]);
    expect(c4.heldOutSurvivors.n).toBe(0);
    expect(g4.survival).toEqual([
      [0, 1],
      [40, 1],
    ]);
    expect(g4.heldOutSurvivors.mean).toBeCloseTo(0.6, 12);
    expect(g4.medianCollapseStep).toBeNull();
  });

  it('a seed twice in one cell is refused', () => {
    expect(() => ladderRows([run('grpo', 0, 1, null), run('grpo', 0, 1, 3)], { baseline: 'grpo' })).toThrow(/seed 1 twice/);
  });
});
