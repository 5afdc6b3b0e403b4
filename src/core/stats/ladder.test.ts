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

  it('a run stopped at its collapse counts exactly as the same run trained on: every row figure unchanged', () => {
    // Stop-on-collapse: a run collapsing at step S stops a step or two later (lastStep S + 2) and is not evaluated
    // held-out (null); trained on, it would have reached step 40 with some held-out success.
    const collapses = [12, null, 7, null, 30, 12, null, 19];
    const ranOn = [
      ...seeds.map((s, i) => run('grpo', 3, s, collapses[i], collapses[i] === null ? 0.4 + s / 100 : 0.05)),
      ...seeds.map((s) => run('cispo', 3, s, s <= 6 ? 4 + s : null, 0.3)),
    ];
    const stopped = ranOn.map((o) => (o.collapseStep === null ? o : { ...o, lastStep: o.collapseStep + 2, heldOut: null }));
    expect(ladderRows(stopped, { baseline: 'grpo' })).toEqual(ladderRows(ranOn, { baseline: 'grpo' }));
    const [g] = ladderRows(stopped, { baseline: 'grpo' });
    expect(g.medianCollapseStep).toBe(19); // KM: 8 at risk; 7 → 7/8, 12 (2 of 7) → 5/8, 19 (1 of 5) → 4/8 ≤ ½
    expect(g.collapsedShare.mean).toBe(5 / 8);
    expect(g.heldOutSurvivors.n).toBe(3);
  });

  it('arms: one row per arm with its arm, compared with its own baseline arm, with the rollout speed-up over it', () => {
    const arm = (name: string, preset: string, seed: number, c: number | null, rollout: number | null): LadderRunOutcome => ({
      ...run(preset, 1, seed, c),
      arm: name,
      rolloutSeconds: rollout,
      // the engine gap: int8 arms 4e-4 + seed·1e-5 nats per token, fp32 ones 2e-7
      rolloutMismatch: name.includes('int8') ? 4e-4 + seed * 1e-5 : 2e-7,
    });
    const outcomes = [
      ...seeds.map((s) => arm('fp32', 'sampo', s, null, 2 + (s % 2) * 0.2)), // mean 2.1 s
      ...seeds.map((s) => arm('int8', 'sampo', s, 6, 0.7)), // all collapse at 6, 3× faster
      ...seeds.map((s) => arm('int8-tis', 'sampo', s, s === 1 ? 20 : null, s === 1 ? null : 0.7)),
      ...seeds.map((s) => arm('grpo-fp32', 'grpo', s, null, 2)),
    ];
    const rows = ladderRows(outcomes, { baseline: 'fp32', vs: { fp32: null, int8: 'fp32', 'int8-tis': 'int8', 'grpo-fp32': null } });
    expect(rows.map((r) => [r.arm, r.preset, r.vsBaseline?.against ?? null])).toEqual([
      ['fp32', 'sampo', null],
      ['int8', 'sampo', 'fp32'],
      ['int8-tis', 'sampo', 'int8'],
      ['grpo-fp32', 'grpo', null],
    ]);
    const [fp32, int8, tis] = rows;
    expect(fp32.rolloutSecondsPerStep.mean).toBeCloseTo(2.1, 12);
    expect(int8.vsBaseline!.verdict).toBe('collapses more');
    expect(int8.vsBaseline!.rolloutSpeedup).toBeCloseTo(3, 12);
    expect(tis.vsBaseline!.verdict).toBe('collapses less');
    expect(tis.vsBaseline!.rolloutSpeedup).toBeCloseTo(1, 12); // the seeds that logged a rollout time: 7 × 0.7 s
    expect(tis.rolloutSecondsPerStep.n).toBe(7);
    expect(fp32.rolloutMismatch.n).toBe(8);
    expect(fp32.rolloutMismatch.mean).toBeCloseTo(2e-7, 18);
    expect(int8.rolloutMismatch.n).toBe(8);
    expect(int8.rolloutMismatch.mean).toBeCloseTo(4e-4 + 4.5e-5, 15); // seeds 1..8: mean seed 4.5
    // a ladder of presets has no arm field and no rollout times
    const plain = ladderRows([run('grpo', 0, 1, null)], { baseline: 'grpo' });
    expect('arm' in plain[0]).toBe(false);
    expect(plain[0].rolloutSecondsPerStep.n).toBe(0);
    expect(plain[0].rolloutMismatch).toMatchObject({ n: 0, mean: null });
  });

  it('an arm with runs of two presets is refused', () => {
    expect(() =>
      ladderRows(
        [
          { ...run('grpo', 0, 1, null), arm: 'x' },
          { ...run('sampo', 0, 2, null), arm: 'x' },
        ],
        { baseline: 'grpo' },
      ),
    ).toThrow(/arm x has runs of two presets/);
  });

  it('a cell whose baseline has no runs at its env and level names it: never a baseline itself', () => {
    // A resumed ladder that had lost its grpo lines once printed gspo and gigpo each as "baseline".
    const rows = ladderRows([...seeds.map((s) => run('gspo', 2, s, null)), ...seeds.map((s) => run('grpo', 4, s, null))], {
      baseline: 'grpo',
    });
    expect(rows.map((r) => [r.level, r.preset, r.vsBaseline, r.baselineMissing ?? null])).toEqual([
      [2, 'gspo', null, 'grpo'],
      [4, 'grpo', null, null],
    ]);
    // an arm whose vs arm has no runs, likewise; a baseline arm (vs null) has none to miss
    const arms = ladderRows(
      [
        { ...run('sampo', 2, 1, null), arm: 'int8' },
        { ...run('sampo', 2, 1, null), arm: 'fp32-b' },
      ],
      {
        baseline: 'fp32',
        vs: { int8: 'fp32', 'fp32-b': null },
      },
    );
    expect(arms.map((r) => [r.arm, r.baselineMissing ?? null])).toEqual([
      ['int8', 'fp32'],
      ['fp32-b', null],
    ]);
  });

  it('a seed twice in one cell is refused', () => {
    expect(() => ladderRows([run('grpo', 0, 1, null), run('grpo', 0, 1, 3)], { baseline: 'grpo' })).toThrow(/seed 1 twice/);
  });
});
