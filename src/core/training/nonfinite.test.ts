/**
 * An update whose result is non-finite is skipped even when the gradient norm is
 * finite (optim.eps that rounds to 0 in float32 gives 0/0 where a weight's gradient is 0), and non-finite weights
 * are caught by name.
 */
import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { AdamW, assertFiniteWeights } from './adamw';
import { NonFiniteWeightsError } from './finiteWeights';

describe('non-finite updates and weights', () => {
  it('an update that would write NaN (eps = 1e-300 → 0 in float32) is skipped, counted and leaves θ, moments and t alone', () => {
    const w = tf.variable(
      tf.tensor2d([
        [1, 2],
        [3, 4],
      ]),
      true,
      'pos_embedding',
    );
    const opt = new AdamW([w], { beta1: 0.9, beta2: 0.999, eps: 1e-300, weightDecay: 0, gradClip: 1 });
    // Rows of an embedding that no token used get a zero gradient: m̂ = v̂ = 0 and 0/(0 + 0) = NaN.
    const r = opt.step(
      {
        pos_embedding: tf.tensor2d([
          [0.1, 0.2],
          [0, 0],
        ]),
      },
      1e-4,
    );
    expect(Number.isFinite(r.gradNorm)).toBe(true);
    expect(r.skipped).toBe(true);
    expect(r.nonFiniteResult).toBe(true);
    expect([...w.dataSync()]).toEqual([1, 2, 3, 4]);
    expect(opt.stepCount).toBe(0);
    expect([...opt.getState().tensors['m/pos_embedding'].data]).toEqual([0, 0, 0, 0]);
    // A sane eps updates normally.
    opt.dispose();
    const ok = new AdamW([w], { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, gradClip: 1 });
    const r2 = ok.step(
      {
        pos_embedding: tf.tensor2d([
          [0.1, 0.2],
          [0, 0],
        ]),
      },
      1e-4,
    );
    expect(r2.skipped).toBe(false);
    expect([...w.dataSync()].every(Number.isFinite)).toBe(true);
    expect(w.dataSync()[0]).toBeLessThan(1);
    ok.dispose();
  });

  it('non-finite weights are reported with the variable, the count and the step', () => {
    const ok = tf.variable(tf.tensor1d([1, 2]), true, 'ok');
    const bad = tf.variable(tf.tensor1d([1, NaN, Infinity]), true, 'blocks.0.attn');
    expect(() => assertFiniteWeights([ok], 4)).not.toThrow();
    let e: unknown;
    try {
      assertFiniteWeights([ok, bad], 4);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(NonFiniteWeightsError);
    expect((e as Error).message).toMatch(/non-finite at step 4 \(2 of 3 values of blocks\.0\.attn/);
  });
});
