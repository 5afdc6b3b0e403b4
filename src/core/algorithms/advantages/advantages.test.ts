import { describe, expect, it } from 'vitest';
import { ADVANTAGES, type AdvantageParams, type TurnRow } from './index';
import { gigpoCore } from './gigpo';
import { episodeReturns, rowScores, stepReturns } from './scores';
import { groupStats } from './stats';

const P: AdvantageParams = {
  invalidPenalty: 0.1,
  epsilon: 1e-6,
  normByStd: true,
  crossSteps: true,
  gamma: 0.95,
  stepAdvantageW: 1,
  gigpoMode: 'mean_std_norm',
  empg: { k: 1, kf: 1, zeta: 0.05 },
};

function row(uid: string, trajUid: string, envReward: number, anchor = 'o', actionValid = true, entropy?: number): TurnRow {
  return { uid, trajUid, envReward, actionValid, anchor, entropy };
}

// Group u: trajectory a (2 turns, wins 10 on turn 2, turn 1 invalid) and b (1 turn, reward 0);
// group v: a single one-turn trajectory (singleton group).
const rows: TurnRow[] = [row('u', 'a', 0, 's0', false), row('u', 'a', 10, 's1'), row('u', 'b', 0, 's0'), row('v', 'c', 1, 'z')];

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('scores and returns: where the invalid penalty goes', () => {
  it('R_τ on every row, λ off the invalid row only', () => {
    expect(episodeReturns(rows)).toEqual([10, 10, 0, 1]);
    expect(rowScores(rows, P)).toEqual([9.9, 10, 0, 1]);
  });

  it("discounted step returns, penalty after discounting on the row's own step", () => {
    const g = stepReturns(rows, 0.95, 0.1);
    expect(g[0]).toBeCloseTo(0 + 0.95 * 10 - 0.1, 12); // not (0 − 0.1) + 0.95·10 propagated further
    expect(g[1]).toBe(10);
    expect(g[2]).toBe(0);
    // a penalty on a LATER turn does not reach earlier turns
    const later = stepReturns([row('u', 't', 1), row('u', 't', 1, 'o', false)], 0.5, 0.1);
    expect(later).toEqual([1 + 0.5 * 1, 1 - 0.1]);
  });
});

describe('grpo (cross-steps)', () => {
  it("hand-computed: unbiased std over the group's turn rows, ε = 1e-6; singleton μ 0, σ 1", () => {
    const r = ADVANTAGES.get('grpo').fn(rows, P);
    const s = [9.9, 10, 0];
    const mu = sum(s) / 3;
    const sd = Math.sqrt(s.reduce((a, x) => a + (x - mu) ** 2, 0) / 2);
    s.forEach((x, i) => expect(r.value[i]).toBeCloseTo((x - mu) / (sd + 1e-6), 12));
    expect(r.value[3]).toBeCloseTo(1 / (1 + 1e-6), 12);
  });

  it("a group's advantages sum to zero", () => {
    const r = ADVANTAGES.get('grpo').fn(rows, P);
    expect(Math.abs(sum(r.value.slice(0, 3)))).toBeLessThan(1e-9);
  });

  it('a uniform group gives zero advantages (σ = 0 → 0/ε)', () => {
    const r = ADVANTAGES.get('grpo').fn([row('u', 'a', 1), row('u', 'b', 1)], P);
    expect(r.value).toEqual([0, 0]);
    expect(r.metrics.zero_std_groups).toBe(1);
  });

  it('groupStats: singleton rule and unbiased std', () => {
    expect(groupStats([5])).toEqual({ mean: 0, std: 1 });
    expect(groupStats([1, 3]).std).toBeCloseTo(Math.SQRT2, 12);
  });
});

describe('grpo_traj, drgrpo, rloo', () => {
  it("grpo_traj: one sample per trajectory, the mean of its rows' scores (penalty included)", () => {
    const r = ADVANTAGES.get('grpo_traj').fn(rows, P);
    // trajectory a: rows 9.9 (invalid first turn) and 10 → sample 9.95; trajectory b: 0
    const samples = [9.95, 0];
    const mu = sum(samples) / 2;
    const sd = Math.sqrt(((samples[0] - mu) ** 2 + (samples[1] - mu) ** 2) / 1);
    expect(r.value[0]).toBeCloseTo((9.9 - mu) / (sd + 1e-6), 12);
    expect(r.value[1]).toBeCloseTo((10 - mu) / (sd + 1e-6), 12);
    expect(r.value[2]).toBeCloseTo((0 - mu) / (sd + 1e-6), 12);
  });

  it("grpo_traj: a penalised LATER turn lowers its trajectory's sample (not the first row's score)", () => {
    // Group g: t1 = three turns, the 2nd invalid, wins 1 on the last → S = [1, 0.9, 1], sample 2.9/3;
    // t2 = one turn, reward 0 → sample 0; t3 = two valid turns, wins 1 → sample 1.
    const g: TurnRow[] = [
      row('g', 't1', 0),
      row('g', 't1', 0, 'o', false),
      row('g', 't1', 1),
      row('g', 't2', 0),
      row('g', 't3', 0),
      row('g', 't3', 1),
    ];
    const r = ADVANTAGES.get('grpo_traj').fn(g, P);
    // μ = (29/30 + 0 + 1)/3 = 59/90; unbiased σ² = Σ(x − μ)²/2 over the three samples, by hand:
    const mu = 59 / 90;
    const xs = [29 / 30, 0, 1];
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mu) ** 2, 0) / 2);
    expect(mu).toBeCloseTo(0.655555555555, 10);
    expect(r.value[0]).toBeCloseTo((1 - mu) / (sd + 1e-6), 12);
    expect(r.value[1]).toBeCloseTo((0.9 - mu) / (sd + 1e-6), 12);
    expect(r.value[3]).toBeCloseTo((0 - mu) / (sd + 1e-6), 12);
    // the first-row reading (samples 1, 0, 1: μ = 2/3, σ = √(1/3)) differs from this in the 4th decimal
    expect(Math.abs(r.value[3] - (0 - 2 / 3) / (Math.sqrt(1 / 3) + 1e-6))).toBeGreaterThan(1e-4);
  });

  it('drgrpo: S − μ without std', () => {
    const r = ADVANTAGES.get('drgrpo').fn(rows, P);
    const mu = (9.9 + 10 + 0) / 3;
    expect(r.value[0]).toBeCloseTo(9.9 - mu, 12);
    expect(r.value[3]).toBe(1); // singleton: μ = 0
  });

  it('rloo: S minus the mean of the others; singleton unchanged', () => {
    const r = ADVANTAGES.get('rloo').fn(rows, P);
    expect(r.value[0]).toBeCloseTo(9.9 - (10 + 0) / 2, 12);
    expect(r.value[2]).toBeCloseTo(0 - (9.9 + 10) / 2, 12);
    expect(r.value[3]).toBe(1);
  });
});

describe('gigpo', () => {
  // Two trajectories in one group that both start from s0, then one revisits s0.
  const g: TurnRow[] = [row('u', 'a', 0, 's0'), row('u', 'a', 1, 's1'), row('u', 'b', 0, 's0'), row('u', 'b', 0, 's0', false)];

  it('episode term (cross-steps) + ω·step term over (u, anchor) groups, mean_std_norm', () => {
    const r = ADVANTAGES.get('gigpo').fn(g, P);
    const S = rowScores(g, P); // [1, 1, 0, -0.1]
    const G = stepReturns(g, 0.95, 0.1); // [0.95, 1, 0, -0.1]
    const mu = sum(S) / 4;
    const sd = Math.sqrt(S.reduce((a, x) => a + (x - mu) ** 2, 0) / 3);
    const anchor = [G[0], G[2], G[3]]; // the three s0 rows
    const am = sum(anchor) / 3;
    const asd = Math.sqrt(anchor.reduce((a, x) => a + (x - am) ** 2, 0) / 2);
    expect(r.value[0]).toBeCloseTo((S[0] - mu) / (sd + 1e-6) + (G[0] - am) / (asd + 1e-6), 10);
    // s1 is a singleton anchor group: step term 0
    expect(r.value[1]).toBeCloseTo((S[1] - mu) / (sd + 1e-6), 10);
    expect(r.metrics.anchor_singletons).toBe(1);
  });

  it('mean_norm subtracts the means only; ω scales the step term', () => {
    const r = ADVANTAGES.get('gigpo').fn(g, { ...P, gigpoMode: 'mean_norm', stepAdvantageW: 0.5 });
    const S = rowScores(g, P);
    const G = stepReturns(g, 0.95, 0.1);
    const am = (G[0] + G[2] + G[3]) / 3;
    expect(r.value[2]).toBeCloseTo(S[2] - sum(S) / 4 + 0.5 * (G[2] - am), 12);
  });

  it('the same anchor text in different groups does not share a step group', () => {
    const c = gigpoCore(
      { scores: [1, 0], stepReturns: [1, 0], uid: ['u', 'v'], trajUid: ['a', 'b'], anchor: ['s', 's'] },
      { epsilon: 1e-6, stepAdvantageW: 1, mode: 'mean_norm' },
    );
    expect(c.step).toEqual([0, 0]);
  });
});

describe('empg', () => {
  it('rescales by entropy confidence, adds ζ·f of the next turn, then centres on the batch mean', () => {
    const e: TurnRow[] = [row('u', 'a', 1, 'o', true, 0.2), row('u', 'a', 0, 'o', true, 1.0), row('u', 'b', 0, 'o', true, 0.6)];
    const base = ADVANTAGES.get('grpo').fn(e, P).value;
    const r = ADVANTAGES.get('empg').fn(e, P);
    const hn = [0.2, 1.0, 0.6].map((h) => (h - 0.2) / (0.8 + 1e-8));
    const ex = hn.map((h) => Math.exp(-h));
    const g = ex.map((x) => x / (sum(ex) / 3 + 1e-8));
    const f = hn.map((h) => Math.exp(-h));
    const mod = [g[0] * base[0] + 0.05 * f[1], g[1] * base[1], g[2] * base[2]];
    const m = sum(mod) / 3;
    mod.forEach((v, i) => expect(r.value[i]).toBeCloseTo(v - m, 10));
    expect(Math.abs(sum(r.value))).toBeLessThan(1e-9);
  });

  it('asks for the entropy it needs', () => {
    expect(() => ADVANTAGES.get('empg').fn([row('u', 'a', 1)], P)).toThrow(/TurnRow.entropy/);
  });
});

describe('catalog', () => {
  it('lists the six estimators and rejects unknown names with the list', () => {
    expect(ADVANTAGES.names).toEqual(['grpo', 'grpo_traj', 'drgrpo', 'gigpo', 'empg', 'rloo']);
    expect(() => ADVANTAGES.get('ppo')).toThrow(/known advantage estimator names: grpo, grpo_traj, drgrpo, gigpo, empg, rloo/);
  });

  it('NaN rewards surface as NaN advantages in their group only', () => {
    const r = ADVANTAGES.get('grpo').fn([row('u', 'a', Number.NaN), row('u', 'b', 1), row('v', 'c', 1), row('v', 'd', 0)], P);
    expect(Number.isNaN(r.value[0])).toBe(true);
    expect(r.value[2]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 12);
  });
});
