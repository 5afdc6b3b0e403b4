import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { arr, m2, num, setupTf } from '../test-helpers';
import { entropyFromLogits, KL_ESTIMATORS } from './index';

beforeAll(setupTf);

function kl(name: string, lp: number[][], ref: number[][]) {
  return tf.tidy(() => {
    const r = m2(ref);
    let value: number[][] = [];
    const { grad } = tf.valueAndGrad((x: tf.Tensor) => {
      const k = KL_ESTIMATORS.get(name).fn(x as tf.Tensor2D, r).value;
      value = arr(k);
      return tf.sum(k) as tf.Scalar;
    })(m2(lp));
    return { value: value[0], grad: arr(grad)[0] };
  });
}

describe('KL estimators (log π_θ vs log π_ref)', () => {
  const lp = [[-1.0, -2.0, -0.5]];
  const ref = [[-1.5, -2.0, -0.2]];

  it('kl (k1): d, gradient 1', () => {
    const r = kl('kl', lp, ref);
    expect(r.value[0]).toBeCloseTo(0.5, 6);
    expect(r.value[2]).toBeCloseTo(-0.3, 6);
    expect(r.grad).toEqual([1, 1, 1]);
  });

  it('abs: |d|, gradient sign(d) and 0 at d = 0 (as torch)', () => {
    const r = kl('abs', lp, ref);
    expect(r.value[0]).toBeCloseTo(0.5, 6);
    expect(r.value[2]).toBeCloseTo(0.3, 6);
    expect(r.grad).toEqual([1, 0, -1]);
  });

  it('mse (k2): ½d², gradient d', () => {
    const r = kl('mse', lp, ref);
    expect(r.value[0]).toBeCloseTo(0.125, 6);
    expect(r.grad[0]).toBeCloseTo(0.5, 6);
    expect(r.grad[2]).toBeCloseTo(-0.3, 6);
  });

  it('low_var_kl (k3): e^Δ − Δ − 1 with Δ = ref − lp, gradient 1 − e^Δ', () => {
    const r = kl('low_var_kl', lp, ref);
    const d0 = -0.5;
    expect(r.value[0]).toBeCloseTo(Math.exp(d0) - d0 - 1, 6);
    expect(r.value[1]).toBe(0);
    expect(r.grad[0]).toBeCloseTo(1 - Math.exp(d0), 6);
  });

  it('low_var_kl clamps Δ to ±20 and the estimate to ≤ 10 (zero gradient there)', () => {
    const r = kl('low_var_kl', [[-40, 0]], [[0, -40]]);
    expect(r.value[0]).toBe(10); // Δ = 40 → 20 → e^20 − 21 → 10
    expect(Math.abs(r.grad[0])).toBe(0);
    expect(r.value[1]).toBe(10); // Δ = −40 → −20 → e^−20 + 19 → 10
    expect(Math.abs(r.grad[1])).toBe(0);
  });

  it('unknown estimator names list the known ones', () => {
    expect(() => KL_ESTIMATORS.get('k3')).toThrow(/known KL estimator names: kl, abs, mse, low_var_kl/);
  });
});

describe('entropy from logits', () => {
  it('uniform logits give ln V and a zero gradient', () => {
    const { h, g } = tf.tidy(() => {
      const { value, grad } = tf.valueAndGrad((z: tf.Tensor) => tf.sum(entropyFromLogits(z as tf.Tensor3D)) as tf.Scalar)(
        tf.zeros([1, 1, 4]),
      );
      return { h: num(value), g: (grad.arraySync() as number[][][])[0][0] };
    });
    expect(h).toBeCloseTo(Math.log(4), 6);
    expect(g.every((x) => Math.abs(x) < 1e-7)).toBe(true);
  });

  it('two-way logits: H = −Σ p log p and dH/dz = −p(log p − Σ p log p) by hand', () => {
    const z = [0.3, -1.2];
    const lse = Math.log(Math.exp(z[0]) + Math.exp(z[1]));
    const p = z.map((v) => Math.exp(v - lse));
    const H = -p.reduce((s, q) => s + q * Math.log(q), 0);
    const { h, g } = tf.tidy(() => {
      const { value, grad } = tf.valueAndGrad((x: tf.Tensor) => tf.sum(entropyFromLogits(x as tf.Tensor3D)) as tf.Scalar)(
        tf.tensor3d([[z]]),
      );
      return { h: num(value), g: (grad.arraySync() as number[][][])[0][0] };
    });
    expect(h).toBeCloseTo(H, 6);
    g.forEach((v, i) => expect(v).toBeCloseTo(-p[i] * (Math.log(p[i]) + H), 5));
  });
});
