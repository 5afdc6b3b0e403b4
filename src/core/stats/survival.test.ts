import { describe, expect, it } from 'vitest';
import { clopperPearson, collapseStep, collapsedShare, kaplanMeier, logRank, medianCollapseStep, type SurvivalRun } from './survival';

const collapsed = (t: number, last = 40): SurvivalRun => ({ collapseStep: t, lastStep: last });
const survived = (last = 40): SurvivalRun => ({ collapseStep: null, lastStep: last });

describe('share collapsed with an exact Clopper–Pearson interval', () => {
  it('closed forms at 0 and n of n: [0, 1 − (α/2)^(1/n)] and [(α/2)^(1/n), 1]', () => {
    const [lo0, hi0] = clopperPearson(0, 8);
    expect(lo0).toBe(0);
    expect(hi0).toBeCloseTo(1 - 0.025 ** (1 / 8), 10);
    const [lo8, hi8] = clopperPearson(8, 8);
    expect(lo8).toBeCloseTo(0.025 ** (1 / 8), 10);
    expect(hi8).toBe(1);
  });

  it('5 of 10: the textbook exact interval [0.1871, 0.8129]', () => {
    const [lo, hi] = clopperPearson(5, 10);
    expect(lo).toBeCloseTo(0.187086, 5);
    expect(hi).toBeCloseTo(0.812914, 5);
  });

  it('collapsedShare counts collapses over seeds; bad input is refused with the field', () => {
    const s = collapsedShare([collapsed(3), survived(), collapsed(9), survived()]);
    expect(s).toMatchObject({ collapsed: 2, n: 4, mean: 0.5, method: 'clopper-pearson' });
    expect(s.ci95![0]).toBeLessThan(0.5);
    expect(collapsedShare([]).mean).toBeNull();
    expect(() => collapsedShare([{ collapseStep: 50, lastStep: 40 }])).toThrow(
      /collapseStep must be null or a step in \[0, lastStep = 40\]/,
    );
  });
});

describe('Kaplan–Meier survival and its median', () => {
  it('hand-computed curve with censoring: collapses at 2, 4, 4; censored at 3 and 6', () => {
    const runs = [collapsed(2, 6), collapsed(4, 6), collapsed(4, 6), survived(3), survived(6)];
    // t = 2: 5 at risk, 1 collapses → 0.8; t = 4: 3 at risk (the run censored at 3 has left), 2 collapse → 0.8·1/3
    const km = kaplanMeier(runs);
    expect(km.map(([t]) => t)).toEqual([0, 2, 4, 6]);
    [1, 0.8, 0.8 / 3, 0.8 / 3].forEach((s, i) => expect(km[i][1]).toBeCloseTo(s, 12));
    expect(medianCollapseStep(runs)).toBe(4);
  });

  it('no collapse: flat at 1, median not reached; all at step 0: 0 at once', () => {
    expect(kaplanMeier([survived(30), survived(40)])).toEqual([
      [0, 1],
      [40, 1],
    ]);
    expect(medianCollapseStep([survived(30), survived(40)])).toBeNull();
    expect(kaplanMeier([collapsed(0), collapsed(0)])).toEqual([[0, 0]]);
  });
});

describe('log-rank test', () => {
  it('identical groups: χ² = 0, p = 1, not separable', () => {
    const g = [collapsed(5), collapsed(9), survived(), collapsed(20)];
    const r = logRank(g, g);
    expect(r.chiSquare).toBeCloseTo(0, 12);
    expect(r.p).toBeCloseTo(1, 12);
    expect(r.verdict).toBe('not separable');
    expect(logRank([survived()], [survived()])).toMatchObject({ chiSquare: 0, p: 1, verdict: 'not separable' });
  });

  it('8 seeds that all collapse at step 10 against 8 that never do: χ² = 15 (closed form), p = 1.075e-4', () => {
    const all = Array.from({ length: 8 }, () => collapsed(10));
    const none = Array.from({ length: 8 }, () => survived(40));
    // one event time: n_A = n_B = 8, d = 8: E_A = 4, V = 8·½·½·(16 − 8)/15 = 16/15, χ² = (8 − 4)²/(16/15) = 15
    const r = logRank(all, none);
    expect(r.expectedA).toBeCloseTo(4, 12);
    expect(r.variance).toBeCloseTo(16 / 15, 12);
    expect(r.chiSquare).toBeCloseTo(15, 10);
    expect(r.p).toBeCloseTo(0.00010751117672950056, 9); // erfc(√(15/2))
    expect(r.verdict).toBe('collapses more');
    expect(logRank(none, all).verdict).toBe('collapses less');
  });

  it('a small mixed case against the hand-summed table: χ² = 8/13', () => {
    // A: collapses at 1 and 3; B: collapses at 2, censored at 4.
    // t=1: nA 2, n 4, d 1 → E ½, V ¼; t=2: nA 1, n 3, d 1 → E ⅓, V 2/9; t=3: nA 1, n 2, d 1 → E ½, V ¼
    // O = 2, E = 4/3, V = 13/18 → χ² = (2/3)² / (13/18) = 8/13
    const r = logRank([collapsed(1, 4), collapsed(3, 4)], [collapsed(2, 4), survived(4)]);
    expect(r.observedA).toBe(2);
    expect(r.expectedA).toBeCloseTo(4 / 3, 12);
    expect(r.variance).toBeCloseTo(13 / 18, 12);
    expect(r.chiSquare).toBeCloseTo(8 / 13, 12);
    expect(r.p).toBeCloseTo(0.43276758066778465, 9); // erfc(√(4/13))
    expect(r.verdict).toBe('not separable');
  });
});

describe('when a run collapsed', () => {
  it('the earlier of a critical alert and a held-out fall below a fraction of the start', () => {
    const v: Array<[number, number]> = [
      [0, 0.6],
      [5, 0.5],
      [10, 0.2],
      [15, 0.1],
    ];
    expect(collapseStep(12, v, 0.5)).toBe(10);
    expect(collapseStep(3, v, 0.5)).toBe(3);
    expect(collapseStep(null, v, 0.2)).toBe(15);
    expect(
      collapseStep(
        null,
        [
          [0, 0],
          [5, 0],
        ],
        0.5,
      ),
    ).toBeNull(); // a start of 0 cannot fall
    expect(() => collapseStep(null, v, 1.5)).toThrow(/fraction must be in \(0, 1\)/);
  });
});
