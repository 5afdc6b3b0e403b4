/**
 * Every rollout-correction variant against a hand-computed case (weights, masks, metrics; the bypass losses'
 * value and gradient). The float64 PyTorch cross-check of the same definitions is
 * crosscheck/rollout-correction-torch.integration.test.ts.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { actorLoss } from '../losses/actor-loss';
import { POLICY_LOSSES } from '../losses/index';
import { arr, m2, num, setupTf } from '../test-helpers';
import {
  BYPASS_LOSSES,
  ROLLOUT_IS,
  ROLLOUT_RS,
  parseRsThresholds,
  rejectionMask,
  rolloutCorrection,
  type RolloutCorrectionParams,
} from './index';

beforeAll(setupTf);

const L = Math.log;
// Row 0: ratios 3, 1/4, 1; row 1: ratio 1.5 then padding (its log-ratio values must not matter).
const lrM = [
  [L(3), L(0.25), 0],
  [L(1.5), 99, 0],
];
const mask = [
  [1, 1, 1],
  [1, 0, 0],
];
const close = (a: number, b: number, d = 12) => expect(a).toBeCloseTo(b, d);

describe('IS weights', () => {
  it('token: truncated at the threshold, zero on padding; metrics before truncation', () => {
    const r = ROLLOUT_IS.get('token').fn(lrM, mask, { threshold: 2, thresholdLower: 0, batchNormalize: false });
    r.value.flat().forEach((v, i) => close(v, [2, 0.25, 1, 1.5, 0, 0][i]));
    const m = r.metrics;
    close(m['rollout_corr/rollout_is_mean'], (3 + 0.25 + 1 + 1.5) / (4 + 1e-8));
    close(m['rollout_corr/rollout_is_max'], 3);
    close(m['rollout_corr/rollout_is_min'], 0.25);
    close(m['rollout_corr/rollout_is_ratio_fraction_high'], 1 / (4 + 1e-8));
    close(m['rollout_corr/rollout_is_ratio_fraction_low'], 1 / (4 + 1e-8));
    // std / ESS on weights clamped to [0.5, 2]: 2, 0.5, 1, 1.5 (mean 1.25, E[x²] 1.875)
    close(m['rollout_corr/rollout_is_std'], Math.sqrt(1.875 - 1.25 ** 2), 7);
    close(m['rollout_corr/rollout_is_eff_sample_size'], 1 / 1.2, 7);
    // per-row means of the untruncated weights: (3 + 0.25 + 1)/3 and 1.5
    close(m['rollout_corr/rollout_is_seq_mean'], (4.25 / 3 + 1.5) / 2, 7);
    close(m['rollout_corr/rollout_is_seq_max_deviation'], 0.5, 7);
    expect(m['rollout_corr/rollout_is_batch_norm_factor']).toBeUndefined();
  });

  it('token with batch normalisation: truncated weights divided by their token mean', () => {
    const r = ROLLOUT_IS.get('token').fn(lrM, mask, { threshold: 2, thresholdLower: 0, batchNormalize: true });
    const mu = (2 + 0.25 + 1 + 1.5) / (4 + 1e-8);
    close(r.metrics['rollout_corr/rollout_is_batch_norm_factor'], mu);
    close(r.value[0][0], 2 / mu);
    close(r.value[1][0], 1.5 / mu);
  });

  it('sequence: one weight per row; padded rows count in max/fractions and in seq_fraction_low', () => {
    const withPadRow = [...lrM, [5, 5, 5]];
    const m3 = [...mask, [0, 0, 0]];
    const r = ROLLOUT_IS.get('sequence').fn(withPadRow, m3, { threshold: 1.2, thresholdLower: 0, batchNormalize: false });
    // row sums: ln 0.75, ln 1.5, 0 (no tokens) → weights 0.75, min(1.5, 1.2), —
    r.value[0].forEach((v) => close(v, 0.75));
    close(r.value[1][0], 1.2);
    expect(r.value[1][1]).toBe(0);
    expect(r.value[2]).toEqual([0, 0, 0]);
    const m = r.metrics;
    close(m['rollout_corr/rollout_is_max'], 1.5);
    close(m['rollout_corr/rollout_is_min'], 0.75);
    close(m['rollout_corr/rollout_is_ratio_fraction_high'], 1 / 3); // 1.5 of {0.75, 1.5, 1}
    close(m['rollout_corr/rollout_is_ratio_fraction_low'], 1 / 3); // 0.75 < 1/1.2
    close(m['rollout_corr/rollout_is_seq_fraction_low'], 2 / 3); // 0.75 and the padded row's 0
    close(m['rollout_corr/rollout_is_seq_min'], 0);
  });

  it('icepop: ratio kept inside [lower, upper], zero outside; mask unchanged', () => {
    const r = ROLLOUT_IS.get('icepop').fn(lrM, mask, { threshold: 2, thresholdLower: 0.5, batchNormalize: false });
    r.value.flat().forEach((v, i) => close(v, [0, 0, 1, 1.5, 0, 0][i]));
    close(r.metrics['rollout_corr/icepop_masked_fraction'], 2 / (4 + 1e-8));
    close(r.metrics['rollout_corr/icepop_ratio_abs_dev'], (2 + 0.75 + 0 + 0.5) / (4 + 1e-8));
  });

  it('unknown level names the known ones', () => {
    expect(() => ROLLOUT_IS.get('tis')).toThrow(/known rollout IS level names: token, sequence, icepop/);
  });
});

describe('rejection masks', () => {
  const k3 = (r: number) => Math.exp(r) - 1 - r;
  it('token_k1 keeps log(lower) ≤ −log-ratio ≤ log(upper); a bare upper U means lower 1/U', () => {
    for (const spec of ['0.5_2', '2', 2]) {
      const b = parseRsThresholds(['token_k1'], spec).get('token_k1')!;
      const r = ROLLOUT_RS.get('token_k1').fn(lrM, mask, b);
      // −ln 3 < ln 0.5 and ln 4 > ln 2 are rejected; 0 and −ln 1.5 are kept
      expect(r.value[0]).toEqual([0, 0, 1]);
      expect(r.value[1][0]).toBe(1);
      close(r.metrics['rollout_corr/rollout_rs_token_k1_masked_fraction'], 2 / (4 + 1e-8));
      close(r.metrics['rollout_corr/rollout_rs_token_k1_seq_masked_fraction'], 1 / 2);
      close(r.metrics['rollout_corr/rollout_rs_token_k1_fraction_high'], 1 / (4 + 1e-8)); // ln 4 > ln 2
      close(r.metrics['rollout_corr/rollout_rs_token_k1_fraction_low'], 1 / (4 + 1e-8)); // −ln 3 < ln 0.5
      close(r.metrics['rollout_corr/rollout_rs_token_k1_max'], L(4));
      expect(r.metrics['rollout_corr/rollout_rs_token_k1_seq_fraction_low']).toBeDefined();
    }
    // the asymmetric bound decides: a ratio of 3 has k1 = −ln 3, kept once the lower bound is below 1/3
    expect(ROLLOUT_RS.get('token_k1').fn(lrM, mask, { lower: 0.3, upper: 5 }).value[0]).toEqual([1, 1, 1]);
  });

  it('token_k2 / token_k3 are one-sided', () => {
    expect(ROLLOUT_RS.get('token_k2').fn(lrM, mask, { lower: null, upper: 0.5 }).value[0]).toEqual([0, 0, 1]);
    const r = ROLLOUT_RS.get('token_k3').fn(lrM, mask, { lower: null, upper: 0.7 });
    expect(r.value[0]).toEqual([0, 1, 1]); // k3: 0.901, 0.636, 0
    expect(r.metrics['rollout_corr/rollout_rs_token_k3_seq_fraction_low']).toBeUndefined();
  });

  it('seq_sum / seq_mean / seq_max reject whole rows; statistics over rows with tokens only', () => {
    const rowK3 = [k3(L(3)) + k3(L(0.25)), k3(L(1.5))];
    const m3 = [...mask, [0, 0, 0]];
    const x3 = [...lrM, [9, 9, 9]];
    const sum = ROLLOUT_RS.get('seq_sum_k3').fn(x3, m3, { lower: null, upper: 1 });
    expect(sum.value.map((r) => r[0])).toEqual([0, 1, 1]);
    close(sum.metrics['rollout_corr/rollout_rs_seq_sum_k3_seq_mean'], (rowK3[0] + rowK3[1]) / 2);
    close(sum.metrics['rollout_corr/rollout_rs_seq_sum_k3_max'], rowK3[0]);
    close(sum.metrics['rollout_corr/rollout_rs_seq_sum_k3_fraction_high'], 1 / 2);
    // token-weighted mean of the broadcast row statistic: 3 tokens of row 0, 1 of row 1
    close(sum.metrics['rollout_corr/rollout_rs_seq_sum_k3_mean'], (3 * rowK3[0] + rowK3[1]) / (4 + 1e-8));
    const meanRs = ROLLOUT_RS.get('seq_mean_k3').fn(x3, m3, { lower: null, upper: 0.3 });
    expect(meanRs.value.map((r) => r[0])).toEqual([0, 1, 1]);
    close(meanRs.metrics['rollout_corr/rollout_rs_seq_mean_k3_seq_max'], rowK3[0] / (3 + 1e-8));
    const maxRs = ROLLOUT_RS.get('seq_max_k2').fn(x3, m3, { lower: null, upper: 0.7 });
    expect(maxRs.value.map((r) => r[0])).toEqual([0, 1, 1]);
    close(maxRs.metrics['rollout_corr/rollout_rs_seq_max_k2_seq_max'], 0.5 * L(4) ** 2);
    // seq_mean_k1 bounds the geometric-mean ratio: row 0's mean k1 = −ln(0.75)/3
    const k1 = ROLLOUT_RS.get('seq_mean_k1').fn(lrM, mask, { lower: 0.8, upper: 1.15 }); // 0.0959 ≤ ln 1.15; row 1: −ln 1.5 < ln 0.8
    expect(k1.value.map((r) => r[0])).toEqual([1, 0]);
  });

  it('options chain with AND; the overall seq fraction counts every row, padded ones included', () => {
    const m3 = [...mask, [0, 0, 0]];
    const r = rejectionMask([...lrM, [0, 0, 0]], m3, 'token_k2, seq_mean_k3, token_k2', '0.5,0.3');
    expect(r.value).toEqual([
      [0, 0, 0],
      [1, 0, 0],
      [0, 0, 0],
    ]);
    close(r.metrics['rollout_corr/rollout_rs_masked_fraction'], 3 / (4 + 1e-8));
    close(r.metrics['rollout_corr/rollout_rs_seq_masked_fraction'], 1 / 3);
    close(r.metrics['rollout_corr/rollout_rs_seq_mean_k3_seq_masked_fraction'], 1 / 2);
  });

  it('threshold grammar errors say what to write', () => {
    expect(() => rejectionMask(lrM, mask, 'token_k2,seq_sum_k3', '1,2,3')).toThrow(/3 values but rollout_rs has 2 options/);
    expect(() => rejectionMask(lrM, mask, 'token_k2', '0.5_2')).toThrow(/single upper bound/);
    expect(() => rejectionMask(lrM, mask, 'seq_max_k1', '2')).toThrow(/unknown rollout_rs option "seq_max_k1"; known options: token_k1/);
    expect(() => rejectionMask(lrM, mask, 'token_k3', '-1')).toThrow(/must be positive/);
    expect(() => rejectionMask(lrM, mask, 'token_k3', null)).toThrow(/must be given/);
  });
});

describe('the pipeline and its off-policy metrics', () => {
  const off: RolloutCorrectionParams = {
    rolloutIs: null,
    rolloutIsThreshold: 2,
    rolloutIsThresholdLower: 0,
    rolloutIsBatchNormalize: false,
    rolloutRs: null,
    rolloutRsThreshold: null,
  };
  it('off: no weights, mask unchanged, only the off-policy diagnostics', () => {
    const r = rolloutCorrection([[-1, -2]], [[-1.5, -2]], [[1, 1]], off);
    expect(r.weights).toBeNull();
    expect(r.mask).toEqual([[1, 1]]);
    const m = r.metrics;
    close(m['rollout_corr/kl'], -0.5 / (2 + 1e-8));
    close(m['rollout_corr/k3_kl'], (Math.exp(0.5) - 1.5) / (2 + 1e-8));
    close(m['rollout_corr/chi2_token'], (Math.exp(1) + 1) / (2 + 1e-8) - 1);
    close(m['rollout_corr/chi2_seq'], Math.exp(1) - 1);
    close(m['rollout_corr/training_ppl'], Math.exp(3 / (2 + 1e-8)));
    close(m['rollout_corr/log_ppl_diff'], -0.5 / (2 + 1e-8));
    expect(Object.keys(m).every((k) => !k.includes('rollout_is') && !k.includes('rollout_rs'))).toBe(true);
    expect(() => rolloutCorrection([[-1]], [[-1]], [[0]], off)).toThrow(/at least one valid token/);
  });
});

/** The policy losses' parameters in both modes' tests: token-mean, symmetric clip 0.2 (dual-clip c 3), no sequence mask. */
const LOSS_PARAMS = {
  aggregation: 'token-mean' as const,
  clipRatioLow: 0.2,
  clipRatioHigh: 0.2,
  clipRatioC: 3,
  tauPos: 1,
  tauNeg: 1.05,
  sapoPerTokenTau: false,
  seqMask: { enabled: false, delta: 0 },
};

describe('decoupled mode: the policy losses multiply each token by its IS weight', () => {
  it('vanilla token-mean: −A·w·ratio with the weight as a constant', () => {
    const out = tf.tidy(() => {
      const { value, grad } = tf.valueAndGrad(
        (x: tf.Tensor) =>
          POLICY_LOSSES.get('vanilla').fn(
            {
              logProb: x as tf.Tensor2D,
              oldLogProb: m2([[-1, -1]]),
              advantages: m2([[1, 1]]),
              mask: m2([[1, 1]]),
              rolloutIsWeights: m2([[2, 0.5]]),
            },
            LOSS_PARAMS,
          ).value,
      )(m2([[-1, -1]]));
      return { v: num(value), g: arr(grad) };
    });
    close(out.v, -(2 + 0.5) / 2, 6);
    close(out.g[0][0], -1, 6);
    close(out.g[0][1], -0.25, 6);
  });
});

describe('decoupled mode with rejection: the rejection mask replaces the response mask', () => {
  it("vanilla seq-mean-token-sum, row 2 rejected: the kept rows' IS-weighted sums / 2; gradient −A·w/2", () => {
    const out = tf.tidy(() => {
      const { value, grad } = tf.valueAndGrad(
        (x: tf.Tensor) =>
          POLICY_LOSSES.get('vanilla').fn(
            {
              logProb: x as tf.Tensor2D,
              oldLogProb: m2([
                [-1, -1, -1],
                [-2, -2, -2],
                [-1, -1, -1],
              ]),
              advantages: m2([
                [1, 1, 1],
                [-0.5, -0.5, -0.5],
                [2, 2, 2],
              ]),
              // the pipeline's modified_response_mask: row 2 rejected, row 1's third token padding
              mask: m2([
                [1, 1, 1],
                [1, 1, 0],
                [0, 0, 0],
              ]),
              rolloutIsWeights: m2([
                [2, 0.5, 1],
                [1, 1.5, 0],
                [1.2, 1.2, 1.2],
              ]),
            },
            { ...LOSS_PARAMS, aggregation: 'seq-mean-token-sum' },
          ).value,
      )(
        m2([
          [-1, -1, -1],
          [-2, -2, -2],
          [-1, -1, -1],
        ]),
      );
      return { v: num(value), g: arr(grad) };
    });
    // ratio 1: row 0 −(2 + 0.5 + 1) = −3.5, row 1 0.5·(1 + 1.5) = 1.25 → −2.25 / 2 kept rows (every row: / 3 = −0.75)
    close(out.v, -1.125, 6);
    expect(out.g.map((row) => row.map((g) => g + 0))).toEqual([
      [-1, -0.25, -0.5],
      [0.25, 0.375, 0],
      [0, 0, 0],
    ]);
  });
});

describe('bypass mode (π_old := π_rollout)', () => {
  const corr = (over: Partial<RolloutCorrectionParams>): RolloutCorrectionParams => ({
    rolloutIs: null,
    rolloutIsThreshold: 2,
    rolloutIsThresholdLower: 0,
    rolloutIsBatchNormalize: false,
    rolloutRs: null,
    rolloutRsThreshold: null,
    ...over,
  });
  function run(lossType: 'ppo_clip' | 'reinforce', c: RolloutCorrectionParams) {
    return tf.tidy(() => {
      let metrics: Record<string, number> = {};
      const { value, grad } = tf.valueAndGrad((x: tf.Tensor) => {
        const r = BYPASS_LOSSES.get(lossType).fn(
          { logProb: x as tf.Tensor2D, oldLogProb: m2([[-1.5, -2]]), advantages: m2([[2, 2]]), mask: m2([[1, 1]]) },
          { ...LOSS_PARAMS, lossType, correction: c },
        );
        metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, num(v)]));
        return r.value;
      })(m2([[-1, -2]]));
      return { v: num(value), g: arr(grad), metrics };
    });
  }

  it('reinforce: −A·log π·sg(w), w = min(e^0.5, 1.5) and 1', () => {
    const r = run('reinforce', corr({ rolloutIs: 'token', rolloutIsThreshold: 1.5 }));
    close(r.v, (2 * 1 * 1.5 + 2 * 2 * 1) / 2, 5);
    close(r.g[0][0], (-2 * 1.5) / 2, 5);
    close(r.g[0][1], -2 / 2, 5);
    close(r.metrics['actor/ppo_kl'], -0.25, 5);
    close(r.metrics['rollout_corr/rollout_is_max'], Math.exp(0.5), 5);
  });

  it('ppo_clip: the rejected token leaves loss, gradient and denominator; no IS weight applied', () => {
    // token_k1 "0.8_1.25": k1 = −0.5 is below ln 0.8 → rejected; the second token (ratio 1) stays.
    const r = run('ppo_clip', corr({ rolloutIs: 'token', rolloutRs: 'token_k1', rolloutRsThreshold: '0.8_1.25' }));
    close(r.v, -2, 5);
    expect(r.g[0][0]).toBe(0);
    close(r.g[0][1], -2, 5);
    close(r.metrics['rollout_corr/rollout_rs_masked_fraction'], 0.5, 5);
    expect(r.metrics['actor/pg_clipfrac']).toBe(0);
  });

  // Three rows, the last one rejected: seq_mean_k1 "0.5_2.0" keeps a row whose mean −log-ratio lies in
  // [ln 0.5, ln 2]; rows 0 and 1 have 0 and 0.1, row 2 has 2 (π_θ far below π_rollout). The `arlarena algo`
  // example in docs/guides/rollout-correction.md is this case.
  describe('three rows, one rejected (seq_mean_k1): verl divides seq-mean-token-sum by the 2 kept rows', () => {
    const roll3 = [
      [-1, -2, -1.5],
      [-0.5, -1, -2],
      [-1, -1, -1],
    ];
    const lp3 = [
      [-1.1, -1.9, -1.5],
      [-0.5, -1.2, -2],
      [-3, -2.5, -3.5],
    ];
    const adv3 = [1, -0.5, 2];
    const mask3 = [
      [1, 1, 1],
      [1, 1, 0],
      [1, 1, 1],
    ];
    function run3(lossType: 'ppo_clip' | 'reinforce', aggregation: string, lp = lp3) {
      return tf.tidy(() => {
        let metrics: Record<string, number> = {};
        const { value, grad } = tf.valueAndGrad((x: tf.Tensor) => {
          const r = BYPASS_LOSSES.get(lossType).fn(
            { logProb: x as tf.Tensor2D, oldLogProb: m2(roll3), advantages: m2(adv3.map((a) => [a, a, a])), mask: m2(mask3) },
            {
              ...LOSS_PARAMS,
              aggregation: aggregation as typeof LOSS_PARAMS.aggregation,
              lossType,
              correction: corr({ rolloutRs: 'seq_mean_k1', rolloutRsThreshold: '0.5_2.0' }),
            },
          );
          metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, num(v)]));
          return r.value;
        })(m2(lp));
        return { v: num(value), g: arr(grad), metrics };
      });
    }

    it('reinforce: (4.5 − 0.85) / 2 = 1.825 (every row: / 3 = 1.2167); gradient −A/2 on kept tokens', () => {
      const r = run3('reinforce', 'seq-mean-token-sum');
      close(r.metrics['rollout_corr/rollout_rs_seq_masked_fraction'], 1 / 3, 6);
      // row 0: −1·(−1.1 − 1.9 − 1.5) = 4.5; row 1: 0.5·(−0.5 − 1.2) = −0.85; row 2 rejected
      close(r.v, (4.5 - 0.85) / 2, 5);
      expect(r.g.map((row) => row.map((g) => +g.toFixed(6)))).toEqual([
        [-0.5, -0.5, -0.5],
        [0.25, 0.25, 0],
        [0, 0, 0],
      ]);
    });

    it('ppo_clip: Σ −A·ratio over the kept rows / 2; gradient −A·ratio/2', () => {
      const r = run3('ppo_clip', 'seq-mean-token-sum');
      const ratio = lp3.map((row, i) => row.map((v, t) => Math.exp(v - roll3[i][t])));
      // no ratio leaves [0.8, 1.2] on the kept tokens, so the loss is −A·ratio there
      const row0 = -(ratio[0][0] + ratio[0][1] + ratio[0][2]);
      const row1 = 0.5 * (ratio[1][0] + ratio[1][1]);
      close(r.v, (row0 + row1) / 2, 5);
      const want = [ratio[0].map((q) => -q / 2), [0.25 * ratio[1][0], 0.25 * ratio[1][1], 0], [0, 0, 0]];
      r.g.forEach((row, i) => row.forEach((g, t) => close(g, want[i][t], 6)));
    });

    it('the other aggregations over the same kept tokens (reinforce): token-mean / 5, seq-mean-token-mean / 2 rows', () => {
      close(run3('reinforce', 'token-mean').v, (4.5 - 0.85) / 5, 5);
      close(run3('reinforce', 'seq-mean-token-mean').v, (4.5 / 3 - 0.85 / 2) / 2, 5);
      close(run3('reinforce', 'seq-mean-token-sum-norm').v, (4.5 - 0.85) / 3, 5);
    });

    it('every row rejected: loss 0 (verl: 0 / 0 = NaN) and a zero gradient, both loss types, every aggregation', () => {
      const far = roll3.map((row) => row.map((v) => v - 1)); // mean −log-ratio 1 > ln 2 in every row
      for (const lossType of ['reinforce', 'ppo_clip'] as const)
        for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm']) {
          const r = run3(lossType, agg, far);
          close(r.metrics['rollout_corr/rollout_rs_seq_masked_fraction'], 1, 6);
          expect(r.v, `${lossType} ${agg}`).toBe(0);
          expect(
            r.g.flat().every((g) => g === 0),
            `${lossType} ${agg}`,
          ).toBe(true);
        }
    });
  });

  it('through actorLoss: the bypass loss replaces the configured one', () => {
    const v = tf.tidy(() =>
      num(
        actorLoss(
          { logProb: m2([[-1, -2]]), oldLogProb: m2([[-1.5, -2]]), advantages: m2([[2, 2]]), mask: m2([[1, 1]]) },
          {
            ...LOSS_PARAMS,
            mode: 'gspo',
            entropyCoeff: 0,
            kl: { enabled: false, type: 'low_var_kl', coef: 0 },
            bypass: { lossType: 'reinforce', correction: corr({}) },
          },
        ).value,
      ),
    );
    close(v, (2 + 4) / 2, 5);
  });

  it('unknown loss type names the known ones', () => {
    expect(() => BYPASS_LOSSES.get('ppo')).toThrow(/known bypass loss type names: ppo_clip, reinforce/);
  });
});
