import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerReductionGrads } from './reductionGrads';

// Values that catch a change of arithmetic: reduced sizes that are not powers of two (x / 3 and x · (1/3) differ in
// the last bit for many x), signed zeros, infinities, NaN and subnormals.
const SPECIAL = [0, -0, 1e-40, -3.5e-39, Infinity, -Infinity, NaN, 1 / 3, -7.25, 6.02e23, -1e-7];

function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out[i] = i % 7 === 0 ? SPECIAL[(s >> 8) % SPECIAL.length] : (s / 2147483648 - 0.5) * 10 ** ((s % 9) - 4);
  }
  return out;
}

/** Gradients of a scalar built on reductions of x, w.r.t. x (the upstream gradient is `w`, so dy is not all ones). */
function grads(x: tf.Tensor, w: tf.Tensor, f: (x: tf.Tensor) => tf.Tensor): Float32Array {
  return tf.tidy(
    () =>
      tf
        .grad((t: tf.Tensor) => tf.sum(tf.mul(f(t), w)))(x)
        .dataSync() as Float32Array,
  );
}

const bits = (a: Float32Array): number[] => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

// A LayerNorm as the policy writes it (model.ts), whose backward runs both Mean gradients.
function layerNorm(x: tf.Tensor): tf.Tensor {
  const xc = tf.sub(x, tf.mean(x, -1, true));
  return tf.mul(xc, tf.rsqrt(tf.add(tf.mean(tf.mul(xc, xc), -1, true), 1e-5)));
}

const CASES: Array<{ name: string; shape: number[]; w: number[]; f: (x: tf.Tensor) => tf.Tensor }> = [
  { name: 'mean over the last axis, kept', shape: [5, 3], w: [5, 1], f: (x) => tf.mean(x, -1, true) },
  { name: 'mean over axes 0 and 2', shape: [3, 4, 7], w: [4], f: (x) => tf.mean(x, [0, 2]) },
  { name: 'mean of everything', shape: [6, 5], w: [], f: (x) => tf.mean(x) },
  { name: 'sum over axis 1', shape: [4, 7, 3], w: [4, 3], f: (x) => tf.sum(x, 1) },
  { name: 'sum over a size-1 axis (no broadcast)', shape: [5, 1], w: [5], f: (x) => tf.sum(x, 1) },
  { name: 'LayerNorm (two means)', shape: [9, 12], w: [9, 12], f: layerNorm },
];

beforeAll(async () => {
  await tf.setBackend('cpu');
  (tf.findBackend('cpu') as unknown as { firstUse: boolean }).firstUse = false;
});

describe('reduction gradients without a ones tensor', () => {
  it('give the bits of tfjs own Mean and Sum gradients, on special values too, with a lower memory peak', async () => {
    // tfjs's stock gradients first (this file runs in its own process: nothing registered them yet) ...
    const stockMean = tf.getGradient('Mean').gradFunc;
    const inputs = CASES.map((c, i) => ({
      x: tf.tensor(
        values(
          c.shape.reduce((a, b) => a * b, 1),
          11 + i,
        ),
        c.shape,
      ),
      w: tf.tensor(
        values(
          c.w.reduce((a, b) => a * b, 1),
          97 + i,
        ),
        c.w,
      ),
    }));
    const stock = CASES.map((c, i) => grads(inputs[i].x, inputs[i].w, c.f));
    const ln = { x: tf.tensor(values(64 * 40, 5), [64, 40]), w: tf.tensor(values(64 * 40, 6), [64, 40]) };
    const peak = async (): Promise<number> => (await tf.profile(() => grads(ln.x, ln.w, layerNorm))).peakBytes;
    const stockPeak = await peak();
    // ... then the registered ones, on the same inputs.
    registerReductionGrads();
    expect(tf.getGradient('Mean').gradFunc).not.toBe(stockMean);
    CASES.forEach((c, i) => {
      const lean = grads(inputs[i].x, inputs[i].w, c.f);
      expect(bits(lean), c.name).toEqual(bits(stock[i]));
    });
    // The input-sized ones tensors (and the products with them) are gone from the LayerNorm's backward pass.
    expect(await peak()).toBeLessThan(stockPeak);
    tf.dispose([...inputs.flatMap((t) => [t.x, t.w]), ln.x, ln.w]);
  });
});
