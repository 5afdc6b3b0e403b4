import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { arr, m2, num, setupTf } from '../test-helpers';
import { AGGREGATIONS, aggregate, wholeDenominator } from './index';

beforeAll(setupTf);

// 3 rows × 3 tokens; row 2 is fully masked.
const L = [
  [1, 2, 3],
  [4, 5, 6],
  [7, 8, 9],
];
const M = [
  [1, 1, 0],
  [1, 0, 0],
  [0, 0, 0],
];

function run(mode: string, loss = L, mask = M) {
  return tf.tidy(() => {
    const m = m2(mask);
    const { value, grad } = tf.valueAndGrad((x: tf.Tensor) => aggregate(mode, x as tf.Tensor2D, m).value)(m2(loss));
    return { value: num(value), grad: arr(grad) };
  });
}

describe('loss aggregation', () => {
  it('token-mean: Σ m·L / (Σ m + 1e-8), gradient m / Σ m', () => {
    const r = run('token-mean');
    expect(r.value).toBeCloseTo((1 + 2 + 4) / 3, 6);
    expect(r.grad).toEqual(
      [
        [1 / 3, 1 / 3, 0],
        [1 / 3, 0, 0],
        [0, 0, 0],
      ].map((row) => row.map((v) => Math.fround(v))),
    );
  });

  it('seq-mean-token-mean drops the fully masked row from the mean', () => {
    const r = run('seq-mean-token-mean');
    // rows: (1+2)/2 = 1.5 and 4/1 = 4 → mean over 2 valid rows = 2.75
    expect(r.value).toBeCloseTo(2.75, 6);
    expect(r.grad[0][0]).toBeCloseTo(0.25, 6); // 1/(2 tokens · 2 rows)
    expect(r.grad[1][0]).toBeCloseTo(0.5, 6); // 1/(1 token · 2 rows)
    expect(r.grad[2]).toEqual([0, 0, 0]);
  });

  it('seq-mean-token-sum drops the fully masked row from the mean, as verl since #3915', () => {
    const r = run('seq-mean-token-sum');
    // rows: 1+2 = 3 and 4 → mean over 2 valid rows = 3.5 (every row: 7/3, the paper's code and verl before #3915)
    expect(r.value).toBeCloseTo(3.5, 6);
    expect(r.grad).toEqual([
      [0.5, 0.5, 0],
      [0.5, 0, 0],
      [0, 0, 0],
    ]);
  });

  // Three rows, the last one rejected (its mask zeroed by a rejection option, as the bypass and decoupled
  // rejection masks do): verl's agg_loss (core_algos.py at b178a3c) divides by what each mode below says.
  describe('three rows, one rejected, against hand-computed values and gradients', () => {
    const L3 = [
      [2, -1, 4],
      [1, 3, 0.5],
      [5, 6, 7],
    ];
    const M3 = [
      [1, 1, 1],
      [1, 1, 0],
      [0, 0, 0],
    ];
    const f = (v: number) => Math.fround(v);
    it('seq-mean-token-sum: (5 + 4) / 2 kept rows, not / 3; gradient 1/2 on kept tokens', () => {
      const r = run('seq-mean-token-sum', L3, M3);
      expect(r.value).toBe(f(4.5));
      expect(r.grad).toEqual([
        [0.5, 0.5, 0.5],
        [0.5, 0.5, 0],
        [0, 0, 0],
      ]);
    });
    it('seq-mean-token-mean: (5/3 + 4/2) / 2 kept rows; gradient 1/(T_r · 2)', () => {
      const r = run('seq-mean-token-mean', L3, M3);
      expect(r.value).toBeCloseTo(11 / 6, 6);
      for (const g of r.grad[0]) expect(g).toBeCloseTo(1 / 6, 7);
      expect(r.grad[1]).toEqual([0.25, 0.25, 0]);
      expect(r.grad[2]).toEqual([0, 0, 0]);
    });
    it('token-mean: 9 / 5 kept tokens; gradient 1/5', () => {
      const r = run('token-mean', L3, M3);
      expect(r.value).toBeCloseTo(9 / 5, 6);
      expect(r.grad.flat()).toEqual([1, 1, 1, 1, 1, 0, 0, 0, 0].map((m) => f(m / 5)));
    });
    it('seq-mean-token-sum-norm: 9 / the width 3, the rejected row counted by nothing; gradient 1/3', () => {
      const r = run('seq-mean-token-sum-norm', L3, M3);
      expect(r.value).toBe(f(3));
      expect(r.grad.flat()).toEqual([1, 1, 1, 1, 1, 0, 0, 0, 0].map((m) => f(m / 3)));
    });
  });

  it('seq-mean-token-sum-norm divides the token sum by the padded width', () => {
    const r = run('seq-mean-token-sum-norm');
    expect(r.value).toBeCloseTo(7 / 3, 6);
  });

  it('a fully masked batch gives 0 and a zero gradient in every mode', () => {
    for (const mode of AGGREGATIONS.names) {
      const r = run(mode, L, [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ]);
      expect(r.value, mode).toBe(0);
      expect(
        r.grad.flat().every((g) => g === 0),
        mode,
      ).toBe(true);
    }
  });

  it('seq-mean-token-mean and seq-mean-token-sum drop a fully masked row even when it holds NaN', () => {
    for (const [mode, want] of [
      ['seq-mean-token-mean', 1.5],
      ['seq-mean-token-sum', 3],
    ] as const) {
      const r = run(
        mode,
        [
          [1, 2, 3],
          [Number.NaN, Number.NaN, Number.NaN],
        ],
        [
          [1, 1, 0],
          [0, 0, 0],
        ],
      );
      expect(r.value, mode).toBeCloseTo(want, 6);
      expect(
        r.grad[1].every((g) => g === 0),
        mode,
      ).toBe(true);
    }
  });

  it("token-mean drops a masked-out token's NaN (verl's masked_sum)", () => {
    const r = run(
      'token-mean',
      [
        [1, Number.NaN],
        [3, 5],
      ],
      [
        [1, 0],
        [1, 1],
      ],
    );
    expect(r.value).toBeCloseTo(3, 6);
    expect(r.grad[0][1]).toBe(0);
  });

  it('the whole-batch denominator of seq-mean-token-sum counts the rows with a token', () => {
    expect(wholeDenominator('seq-mean-token-sum', [3, 2, 0], 3)).toBe(2);
    expect(wholeDenominator('seq-mean-token-sum', [0, 0], 3)).toBe(0);
    // a chunk holding only the rejected row, divided by the whole mini-batch's 2 kept rows: 0, gradient 0
    const chunk = tf.tidy(() => num(AGGREGATIONS.get('seq-mean-token-sum').fn(m2([[5, 6, 7]]), m2([[0, 0, 0]]), 2).value));
    expect(chunk).toBe(0);
  });

  it('every mode backpropagates even when the mask itself is computed on the tape', () => {
    for (const mode of AGGREGATIONS.names) {
      const g = tf.tidy(
        () =>
          tf
            .grad((x: tf.Tensor) => aggregate(mode, x as tf.Tensor2D, tf.add(tf.mul(x, 0), m2(M)) as tf.Tensor2D).value)(m2(L))
            .arraySync() as number[][],
      );
      expect(g[0][0], mode).toBeGreaterThan(0);
    }
  });

  it('an empty batch gives 0 in every mode', () => {
    for (const mode of AGGREGATIONS.names) {
      const v = tf.tidy(() => num(aggregate(mode, tf.zeros([0, 4]) as tf.Tensor2D, tf.zeros([0, 4]) as tf.Tensor2D).value));
      expect(v, mode).toBe(0);
    }
  });

  it('an unknown mode lists the known ones', () => {
    expect(() => AGGREGATIONS.get('seq-mean')).toThrow(
      /known loss aggregation names: token-mean, seq-mean-token-mean, seq-mean-token-sum, seq-mean-token-sum-norm/,
    );
  });
});
