import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../util/rng';
import { entropyFromLogits } from '../kl/index';
import { stopGradient } from '../tensor';
import { arr, expectMatrixClose, m2, num, setupTf } from '../test-helpers';
import { actorLoss } from './actor-loss';
import { POLICY_LOSSES, type PolicyLossName, type PolicyLossParams } from './index';
import { cispo64, gspo64, sapo64, vanilla64, type Case } from './reference64';

beforeAll(setupTf);

const P: PolicyLossParams = {
  aggregation: 'token-mean',
  clipRatioLow: 0.2,
  clipRatioHigh: 0.2,
  clipRatioC: 3,
  tauPos: 1,
  tauNeg: 1.05,
  sapoPerTokenTau: false,
  seqMask: { enabled: false, delta: 0.223 },
};

function run(mode: PolicyLossName, x: Case, p: Partial<PolicyLossParams> = {}) {
  return tf.tidy(() => {
    const old = m2(x.oldLogProb);
    const adv = m2(x.adv);
    const mask = m2(x.mask);
    let metrics: Record<string, number> = {};
    const { value, grad } = tf.valueAndGrad((lp: tf.Tensor) => {
      const r = POLICY_LOSSES.get(mode).fn({ logProb: lp as tf.Tensor2D, oldLogProb: old, advantages: adv, mask }, { ...P, ...p });
      metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k.replace('actor/', ''), num(v)]));
      return r.value;
    })(m2(x.logProb));
    return { value: num(value), grad: arr(grad), ...metrics } as {
      value: number;
      grad: number[][];
      pg_clipfrac: number;
      pg_clipfrac_lower: number;
      ppo_kl: number;
      num_masked_seqs: number;
    };
  });
}

const rowAdv = (a: number[], T: number) => a.map((v) => new Array<number>(T).fill(v));

describe('vanilla (PPO/GRPO token clip + dual clip)', () => {
  const x: Case = {
    oldLogProb: [
      [-1, -1.2],
      [-0.5, -2],
    ],
    logProb: [
      [-0.8, -1.2],
      [-0.9, -2],
    ],
    adv: [
      [1, 1],
      [-1, -1],
    ],
    mask: [
      [1, 1],
      [1, 0],
    ],
  };

  it('hand-computed value, metrics and gradient', () => {
    const r = run('vanilla', x);
    // tokens: w = e^0.2 (A=1, clipped at 1.2 → -1.2), w = 1 (→ -1), w = e^-0.4 (A=-1, clipped at 0.8 → 0.8)
    expect(r.value).toBeCloseTo((-1.2 - 1 + 0.8) / 3, 6);
    expect(r.pg_clipfrac).toBeCloseTo(2 / 3, 6);
    expect(r.ppo_kl).toBeCloseTo((-0.2 + 0 + 0.4) / 3, 6);
    expect(r.pg_clipfrac_lower).toBe(0);
    // clipped tokens (in the advantage's direction) get exactly zero gradient; the free one −A·w/3
    expect(r.grad[0][0]).toBe(0);
    expect(r.grad[1][0]).toBe(0);
    expect(r.grad[0][1]).toBeCloseTo(-1 / 3, 6);
    expect(r.grad[1][1]).toBe(0);
  });

  it('a token moved against the advantage is not clipped (gradient flows)', () => {
    // A > 0 and w = e^-0.5 < 1 − ε: max(−A w, −A·0.8) = −A w, the unclipped branch.
    const r = run('vanilla', { oldLogProb: [[0]], logProb: [[-0.5]], adv: [[1]], mask: [[1]] });
    expect(r.value).toBeCloseTo(-Math.exp(-0.5), 6);
    expect(r.grad[0][0]).toBeCloseTo(-Math.exp(-0.5), 6);
    expect(r.pg_clipfrac).toBe(0);
  });

  it('dual clip caps A<0 losses at −A·c with zero gradient', () => {
    const r = run('vanilla', { oldLogProb: [[0]], logProb: [[2]], adv: [[-0.5]], mask: [[1]] });
    expect(r.value).toBeCloseTo(0.5 * 3, 6);
    expect(r.grad[0][0]).toBe(0);
    expect(r.pg_clipfrac_lower).toBe(1);
  });

  it('asymmetric ε: clip-higher bound 1 + ε_hi', () => {
    const r = run('vanilla', { oldLogProb: [[0]], logProb: [[Math.log(1.25)]], adv: [[1]], mask: [[1]] }, { clipRatioHigh: 0.28 });
    expect(r.value).toBeCloseTo(-1.25, 5); // inside [0.8, 1.28]: unclipped
    expect(r.grad[0][0]).toBeCloseTo(-1.25, 5);
  });
});

describe('invariants shared by the losses', () => {
  it('on-policy (old = sg(new)): ratio exactly 1, ppo_kl 0, gradient −A/N for every loss but CISPO', () => {
    for (const mode of ['vanilla', 'sapo', 'gspo', 'cispo'] as const) {
      const out = tf.tidy(() => {
        const adv = m2([
          [0.5, 0.5],
          [-2, -2],
        ]);
        const mask = m2([
          [1, 1],
          [1, 1],
        ]);
        let ppoKl = NaN;
        let clip = NaN;
        const { grad } = tf.valueAndGrad((lp: tf.Tensor) => {
          const r = POLICY_LOSSES.get(mode).fn(
            { logProb: lp as tf.Tensor2D, oldLogProb: stopGradient(lp as tf.Tensor2D), advantages: adv, mask },
            { ...P, aggregation: 'seq-mean-token-mean' },
          );
          ppoKl = num(r.metrics['actor/ppo_kl']);
          clip = num(r.metrics['actor/pg_clipfrac']);
          return r.value;
        })(
          m2([
            [-1.3, -0.2],
            [-0.7, -3.1],
          ]),
        );
        return { grad: arr(grad), ppoKl, clip };
      });
      expect(out.ppoKl, mode).toBe(0);
      expect(out.clip, mode).toBe(0);
      // seq-mean-token-mean over 2 rows of 2 tokens: weight 1/4; CISPO's gradient is −sg(w)·A too (w = 1)
      expectMatrixClose(out.grad, [
        [-0.125, -0.125],
        [0.5, 0.5],
      ]);
    }
  });

  it('extreme log-ratios (±50): finite value, zero gradient through the ±20 clamp', () => {
    const x: Case = { oldLogProb: [[0, 0]], logProb: [[50, -50]], adv: [[1, -1]], mask: [[1, 1]] };
    for (const mode of ['vanilla', 'sapo'] as const) {
      const r = run(mode, x);
      expect(Number.isFinite(r.value), mode).toBe(true);
      expect(r.grad[0], mode).toEqual([0, 0]);
      expect(r.ppo_kl, mode).toBeCloseTo(0, 5); // (−20 + 20)/2 from clamped ratios
    }
    const c = run('cispo', x);
    expect(Number.isFinite(c.value)).toBe(true);
    expect(c.pg_clipfrac).toBe(1);
  });

  it('all tokens masked: loss 0, metrics 0, zero gradient', () => {
    const x: Case = { oldLogProb: [[0, 0]], logProb: [[1, -1]], adv: [[1, 1]], mask: [[0, 0]] };
    for (const mode of POLICY_LOSSES.names) {
      const r = run(mode, x);
      expect(r.value, mode).toBe(0);
      expect(r.pg_clipfrac, mode).toBe(0);
      expect(
        r.grad[0].every((g) => g === 0),
        mode,
      ).toBe(true);
    }
  });

  it('NaN inputs propagate as NaN (an event the trainer reports), never a throw', () => {
    const x: Case = { oldLogProb: [[0, 0]], logProb: [[Number.NaN, 0]], adv: [[1, 1]], mask: [[1, 1]] };
    for (const mode of POLICY_LOSSES.names) expect(Number.isNaN(run(mode, x).value), mode).toBe(true);
  });

  it('unknown loss names list the known ones', () => {
    expect(() => POLICY_LOSSES.get('ppo')).toThrow(/known policy loss names: vanilla, cispo, sapo, gspo/);
  });
});

describe('cispo', () => {
  it('value multiplies log π; gradient −sg(clip(w))·A even where w is clipped', () => {
    const x: Case = { oldLogProb: [[-1, -1]], logProb: [[-0.5, -1.1]], adv: [[2, 2]], mask: [[1, 1]] };
    const r = run('cispo', x, { clipRatioLow: 1.0, clipRatioHigh: 0.2 });
    const w2 = Math.exp(-0.1);
    expect(r.value).toBeCloseTo((-1.2 * 2 * -0.5 + -w2 * 2 * -1.1) / 2, 5);
    expect(r.grad[0][0]).toBeCloseTo((-1.2 * 2) / 2, 5); // clipped at 1.2 but the gradient still flows
    expect(r.grad[0][1]).toBeCloseTo((-w2 * 2) / 2, 5);
    expect(r.pg_clipfrac).toBeCloseTo(0.5, 6);
    expect(r.pg_clipfrac_lower).toBe(0);
  });
});

describe('sapo', () => {
  it("soft gate: value −(4/τ)σ(τ(w−1))·A, slope −4σ'·w·A, τ from the row-mean advantage", () => {
    // Row 0 mean advantage +0.5 → τ_pos; row 1 mean −0.5 → τ_neg (its +1 token still uses τ_neg).
    const x: Case = {
      oldLogProb: [
        [0, 0],
        [0, 0],
      ],
      logProb: [
        [0.3, 0],
        [0.3, 0],
      ],
      adv: [
        [2, -1],
        [1, -2],
      ],
      mask: [
        [1, 1],
        [1, 1],
      ],
    };
    const r = run('sapo', x, { tauPos: 1, tauNeg: 2 });
    const want = sapo64(x, { lo: 0.2, hi: 0.2, c: 3, tauPos: 1, tauNeg: 2, agg: 'token-mean' });
    expect(r.value).toBeCloseTo(want.value, 5);
    expectMatrixClose(r.grad, want.grad);
    // at w = 1 the gate's slope is 1: the token gradient is −A/N like vanilla
    expect(r.grad[0][1]).toBeCloseTo(1 / 4, 6);
    // diagnostics: w = e^0.3 > 1.2 on two of four tokens
    expect(r.pg_clipfrac).toBeCloseTo(0.5, 6);
  });

  it("diagnostics as ARLArena reports them: clipfrac by each token's own advantage sign, lower = 0", () => {
    // ε = 0.2. Row 0 (Ā = +0.5): w = e^0.3 on both tokens; only the A > 0 token counts (w > 1.2, A > 0).
    // Row 1 (Ā = −0.5): w = e^−0.4 ≈ 0.67 on both; only the A < 0 token counts (w < 0.8, A < 0).
    // Row 2 (Ā = −1): token 0 has w = e^0.3 but A < 0 → not counted; token 1 has w = 1.
    // Hand count: 2 of 6 tokens. (A sign-blind band count would say 3/6 high and 2/6 low.)
    const x: Case = {
      oldLogProb: [
        [0, 0],
        [0, 0],
        [0, 0],
      ],
      logProb: [
        [0.3, 0.3],
        [-0.4, -0.4],
        [0.3, 0],
      ],
      adv: [
        [2, -1],
        [1, -2],
        [-1, -1],
      ],
      mask: [
        [1, 1],
        [1, 1],
        [1, 1],
      ],
    };
    const r = run('sapo', x);
    expect(r.pg_clipfrac).toBeCloseTo(2 / 6, 6);
    expect(r.pg_clipfrac_lower).toBe(0);
    // Sequence masking δ = 0.1: row 1 (Ā < 0, mean(old − new) = 0.4 > δ) leaves the EFFECTIVE mask; row 2
    // (drift −0.15) stays. Over the 4 remaining tokens only row 0's first counts: 1/4.
    const sm = run('sapo', x, { seqMask: { enabled: true, delta: 0.1 } });
    expect(sm.num_masked_seqs).toBe(1);
    expect(sm.pg_clipfrac).toBeCloseTo(1 / 4, 6);
    expect(sm.pg_clipfrac_lower).toBe(0);
  });

  it("per-token τ option uses each token's own sign", () => {
    const x: Case = { oldLogProb: [[0, 0]], logProb: [[0.3, 0.3]], adv: [[1, -3]], mask: [[1, 1]] };
    const perRow = run('sapo', x, { tauPos: 1, tauNeg: 2 });
    const perTok = run('sapo', x, { tauPos: 1, tauNeg: 2, sapoPerTokenTau: true });
    const w = Math.exp(0.3);
    const sig = (z: number) => 1 / (1 + Math.exp(-z));
    expect(perRow.value).toBeCloseTo((-(4 / 2) * sig(2 * (w - 1)) * 1 + (4 / 2) * sig(2 * (w - 1)) * 3) / 2, 5);
    expect(perTok.value).toBeCloseTo((-(4 / 1) * sig(1 * (w - 1)) * 1 + (4 / 2) * sig(2 * (w - 1)) * 3) / 2, 5);
  });
});

describe('gspo', () => {
  it('sequence ratio per row, clipped as a whole; always seq-mean-token-mean', () => {
    // row 0: ℓ = (0.002 + 0.004)/2 = 0.003 → s inside [0.997, 1.004]; row 1: ℓ = 0.01 → clipped (A > 0)
    const x: Case = {
      oldLogProb: [
        [0, 0, 0],
        [0, 0, 0],
      ],
      logProb: [
        [0.002, 0.004, 9],
        [0.01, 0, 0],
      ],
      adv: rowAdv([1, 1], 3),
      mask: [
        [1, 1, 0],
        [1, 0, 0],
      ],
    };
    const p = { clipRatioLow: 3e-3, clipRatioHigh: 4e-3 };
    const r = run('gspo', x, { ...p, aggregation: 'token-mean' });
    const s0 = Math.exp(0.003);
    expect(r.value).toBeCloseTo((-s0 + -1.004) / 2, 6);
    expect(r.grad[0][0]).toBeCloseTo(-s0 / 4, 6); // s_r / (T_r · rows)
    expect(r.grad[0][2]).toBe(0); // padding
    expect(r.grad[1][0]).toBe(0); // clipped row
    expect(r.pg_clipfrac).toBeCloseTo(1 / 3, 6);
    expect(r.ppo_kl).toBeCloseTo(-(0.002 + 0.004 + 0.01) / 3, 6);
  });

  it('ppo_kl from unclamped log-ratios; the sequence log-ratio is capped at 10 (no lower cap)', () => {
    const up = run('gspo', { oldLogProb: [[0]], logProb: [[50]], adv: [[-1]], mask: [[1]] }, { clipRatioLow: 3e-3, clipRatioHigh: 4e-3 });
    expect(up.ppo_kl).toBeCloseTo(-50, 4);
    expect(up.value).toBeCloseTo(Math.exp(10), -1); // −A·e^10, above the cap: no gradient
    expect(up.grad[0][0]).toBe(0);
    const down = run(
      'gspo',
      { oldLogProb: [[0]], logProb: [[-50]], adv: [[-1]], mask: [[1]] },
      { clipRatioLow: 3e-3, clipRatioHigh: 4e-3 },
    );
    expect(down.ppo_kl).toBeCloseTo(50, 4);
    expect(down.value).toBeCloseTo(0.997, 5); // −A·clip(e^−50) = 0.997, clipped → zero gradient
    expect(down.grad[0][0]).toBe(0);
  });
});

describe('sequence masking (GRPO_SM)', () => {
  it('drops A<0 rows whose mean(old − new) > δ from loss and metric denominators', () => {
    const x: Case = {
      oldLogProb: [
        [0, 0],
        [0, 0],
        [0, 0],
      ],
      logProb: [
        [-0.5, -0.5],
        [-0.5, -0.5],
        [0.1, 0.1],
      ],
      adv: rowAdv([-1, 1, -1], 2), // row 0: A<0 and drifted down by 0.5 > δ → masked; row 1 kept (A ≥ 0); row 2 kept (drift −0.1 ≤ δ)
      mask: [
        [1, 1],
        [1, 1],
        [1, 1],
      ],
    };
    const kept: Case = { oldLogProb: x.oldLogProb.slice(1), logProb: x.logProb.slice(1), adv: x.adv.slice(1), mask: x.mask.slice(1) };
    for (const [mode, aggregation] of [
      ['vanilla', 'token-mean'],
      ['cispo', 'seq-mean-token-mean'],
      ['sapo', 'seq-mean-token-sum'],
      ['vanilla', 'seq-mean-token-mean'],
    ] as const) {
      const r = run(mode, x, { seqMask: { enabled: true, delta: 0.223 }, aggregation });
      const k = run(mode, kept, { aggregation });
      expect(r.num_masked_seqs, mode).toBe(1);
      // every aggregation drops the masked row, seq-mean-token-sum too (verl's rows with a token, since its #3915)
      expect(r.value, mode).toBeCloseTo(k.value, 6);
      expect(r.ppo_kl, mode).toBeCloseTo(k.ppo_kl, 6);
      expect(r.pg_clipfrac, mode).toBeCloseTo(k.pg_clipfrac, 6);
      expect(r.grad[0], mode).toEqual([0, 0]);
    }
  });

  it('tests UNclamped log-ratios', () => {
    // mean(old − new) = 30 > δ although the clamped ratio would say 20: still masked (both are > δ); and a
    // row with huge positive drift is kept.
    const r = run(
      'vanilla',
      { oldLogProb: [[30], [-30]], logProb: [[0], [0]], adv: [[-1], [-1]], mask: [[1], [1]] },
      { seqMask: { enabled: true, delta: 0.1 } },
    );
    expect(r.num_masked_seqs).toBe(1);
  });
});

describe('float32 tfjs agrees with a float64 reference', () => {
  it('values and gradients of every loss to ~1e-5 relative on random cases', () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 12; trial++) {
      const N = 3 + (trial % 3);
      const T = 4;
      const g = () => rng.float() * 2 - 1;
      const x: Case = {
        oldLogProb: Array.from({ length: N }, () => Array.from({ length: T }, () => -1 - rng.float() * 2)),
        logProb: [],
        adv: Array.from({ length: N }, () => new Array<number>(T).fill(g() * 2)),
        mask: Array.from({ length: N }, (_, r) =>
          Array.from({ length: T }, (_, t) => (r === N - 1 && trial % 2 === 0 ? 0 : t < T - (r % 3) ? 1 : 0)),
        ),
      };
      x.logProb = x.oldLogProb.map((row) => row.map((v) => v + g() * 0.4));
      for (const agg of ['token-mean', 'seq-mean-token-mean'] as const) {
        const rp = { lo: 0.2, hi: 0.2, c: 3, tauPos: 1, tauNeg: 1.05, agg };
        const cases: Array<[PolicyLossName, (c: Case) => { value: number; grad: number[][] }, Partial<PolicyLossParams>]> = [
          ['vanilla', (c) => vanilla64(c, rp), {}],
          ['cispo', (c) => cispo64(c, { ...rp, lo: 1.0 }), { clipRatioLow: 1.0 }],
          ['sapo', (c) => sapo64(c, rp), {}],
          ['gspo', (c) => gspo64(c, { ...rp, lo: 0.03, hi: 0.04 }), { clipRatioLow: 0.03, clipRatioHigh: 0.04 }],
        ];
        for (const [mode, ref, extra] of cases) {
          const got = run(mode, x, { aggregation: agg, ...extra });
          const want = ref(x);
          expect(Math.abs(got.value - want.value), `${mode} ${agg} value`).toBeLessThanOrEqual(Math.max(1e-6, 1e-5 * Math.abs(want.value)));
          expectMatrixClose(got.grad, want.grad, 1e-5, 1e-7);
        }
      }
    }
  });
});

describe('actorLoss: pg − β_H·entropy + β_KL·KL', () => {
  it('combines the terms and keeps its metrics alive through variableGrads', () => {
    const lp0 = [
      [-1.0, -0.5],
      [-2.0, -0.1],
    ];
    const theta = tf.variable(m2(lp0));
    const logits = tf.tensor3d([
      [
        [1, 0, 0],
        [0, 2, 0],
      ],
      [
        [0, 0, 0],
        [3, 1, 0],
      ],
    ]);
    const ref = m2([
      [-1.2, -0.5],
      [-1.5, -0.3],
    ]);
    const old = m2([
      [-1.1, -0.5],
      [-2.0, -0.2],
    ]);
    const adv = m2([
      [1, 1],
      [-1, -1],
    ]);
    const mask = m2([
      [1, 1],
      [1, 0],
    ]);
    const params = { ...P, mode: 'vanilla' as const, entropyCoeff: 0.001, kl: { enabled: true, type: 'low_var_kl' as const, coef: 0.01 } };
    let metrics: Record<string, tf.Scalar> = {};
    const { value, grads } = tf.variableGrads(() => {
      const r = actorLoss(
        { logProb: theta, oldLogProb: old, advantages: adv, mask, refLogProb: ref, entropy: entropyFromLogits(logits) },
        params,
      );
      metrics = r.metrics as Record<string, tf.Scalar>;
      return r.value;
    }, [theta]);
    const pg = num(metrics['actor/pg_loss']);
    const ent = num(metrics['actor/entropy']);
    const kl = num(metrics['actor/kl_loss']);
    expect(num(value)).toBeCloseTo(pg - 0.001 * ent + 0.01 * kl, 6);
    // k3 by hand on the three unmasked tokens
    const k3 = (lp: number, r: number) => Math.exp(r - lp) - (r - lp) - 1;
    expect(kl).toBeCloseTo((k3(-1, -1.2) + k3(-0.5, -0.5) + k3(-2, -1.5)) / 3, 6);
    expect(num(metrics['actor/kl_coef'])).toBeCloseTo(0.01, 8);
    expect(Object.values(grads)[0].shape).toEqual([2, 2]);
    for (const m of Object.values(metrics)) m.dispose();
    tf.dispose([value, ...Object.values(grads), theta, logits, ref, old, adv, mask]);
  });

  it("leaks nothing: inside variableGrads only the kept metrics survive, and they are the caller's to dispose", () => {
    const theta = tf.variable(
      m2([
        [-1.0, -0.5],
        [-2.0, -0.1],
      ]),
    );
    const consts = [
      m2([
        [-1.1, -0.5],
        [-2.0, -0.2],
      ]),
      m2([
        [1, 1],
        [-1, -1],
      ]),
      m2([
        [1, 1],
        [1, 0],
      ]),
      m2([
        [-1.2, -0.5],
        [-1.5, -0.3],
      ]),
    ];
    const [old, adv, mask, ref] = consts;
    const params = {
      ...P,
      mode: 'sapo' as const,
      aggregation: 'seq-mean-token-mean' as const,
      seqMask: { enabled: true, delta: 0.01 },
      entropyCoeff: 0,
      kl: { enabled: true, type: 'low_var_kl' as const, coef: 0.01 },
    };
    const before = tf.memory().numTensors;
    let metrics: Record<string, tf.Scalar> = {};
    const { value, grads } = tf.variableGrads(() => {
      const r = actorLoss({ logProb: theta, oldLogProb: old, advantages: adv, mask, refLogProb: ref }, params);
      metrics = r.metrics as Record<string, tf.Scalar>;
      return r.value;
    }, [theta]);
    const kept = new Set([value, ...Object.values(grads), ...Object.values(metrics)]);
    expect(tf.memory().numTensors - before).toBe(kept.size);
    tf.dispose([...kept]);
    expect(tf.memory().numTensors).toBe(before);
    tf.dispose([theta, ...consts]);
  });

  it('asks for the missing tensor instead of silently dropping a term', () => {
    const t = m2([[0]]);
    const base = { logProb: t, oldLogProb: t, advantages: t, mask: t };
    expect(() => actorLoss(base, { ...P, mode: 'vanilla', entropyCoeff: 0.001, kl: { enabled: false, type: 'kl', coef: 0 } })).toThrow(
      /entropyFromLogits/,
    );
    expect(() => actorLoss(base, { ...P, mode: 'vanilla', entropyCoeff: 0, kl: { enabled: true, type: 'kl', coef: 0.01 } })).toThrow(
      /refLogProb/,
    );
    t.dispose();
  });
});
