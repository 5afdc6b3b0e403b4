import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { arr, m2, num, setupTf } from '../test-helpers';
import { AGGREGATIONS, aggregate } from './index';

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

  it('seq-mean-token-sum averages over ALL rows, a masked row counting as 0', () => {
    const r = run('seq-mean-token-sum');
    expect(r.value).toBeCloseTo((3 + 4 + 0) / 3, 6);
    expect(r.grad[0][0]).toBeCloseTo(1 / 3, 6);
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

  it('seq-mean-token-mean drops a fully masked row even when it holds NaN', () => {
    const r = run(
      'seq-mean-token-mean',
      [
        [1, 2, 3],
        [Number.NaN, Number.NaN, Number.NaN],
      ],
      [
        [1, 1, 0],
        [0, 0, 0],
      ],
    );
    expect(r.value).toBeCloseTo(1.5, 6);
    expect(r.grad[1].every((g) => g === 0)).toBe(true);
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
