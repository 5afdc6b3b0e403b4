import { describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { AdamW } from './adamw';
import { decodeTensors, encodeTensors } from './tensorio';

const opts = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, gradClip: 1.0 };

describe('AdamW', () => {
  it('first step matches the torch.optim.AdamW formula (decoupled decay, bias correction)', () => {
    const p = tf.variable(tf.tensor1d([1, -2]), true, 'w');
    const opt = new AdamW([p], { ...opts, gradClip: 0 });
    const r = opt.step({ w: tf.tensor1d([0.3, -0.4]) }, 0.1);
    expect(r.gradNorm).toBeCloseTo(0.5, 6);
    // t=1: m̂ = g, v̂ = g², update = g/(|g|+eps) = sign(g); θ = θ(1 − lr·wd) − lr·sign(g)
    const got = p.dataSync();
    expect(got[0]).toBeCloseTo(1 * (1 - 0.001) - 0.1, 5);
    expect(got[1]).toBeCloseTo(-2 * (1 - 0.001) + 0.1, 5);
  });

  it('clips the global norm and reports the pre-clip norm', () => {
    const a = tf.variable(tf.tensor1d([0]), true, 'a');
    const b = tf.variable(tf.tensor1d([0]), true, 'b');
    const opt = new AdamW([a, b], { ...opts, weightDecay: 0, gradClip: 1 });
    const r = opt.step({ a: tf.tensor1d([3]), b: tf.tensor1d([4]) }, 0.1);
    expect(r.gradNorm).toBeCloseTo(5, 5);
    expect(r.skipped).toBe(false);
    const { tensors } = opt.getState();
    // m after one step = (1−β1)·g·coef with coef = 1/(5+1e-6)
    expect(tensors['m/a'].data[0]).toBeCloseTo((0.1 * 3) / 5, 5);
    expect(tensors['m/b'].data[0]).toBeCloseTo((0.1 * 4) / 5, 5);
  });

  it('skips a non-finite gradient without touching parameters or moments', () => {
    const p = tf.variable(tf.tensor1d([1, 1]), true, 'p');
    const opt = new AdamW([p], opts);
    const r = opt.step({ p: tf.tensor1d([NaN, 1]) }, 0.1);
    expect(r.skipped).toBe(true);
    expect(Number.isNaN(r.gradNorm)).toBe(true);
    expect(Array.from(p.dataSync())).toEqual([1, 1]);
    expect(opt.stepCount).toBe(0);
    expect(Array.from(opt.getState().tensors['m/p'].data)).toEqual([0, 0]);
  });

  it('state round-trips through the tensor file format bit-exactly', () => {
    const p = tf.variable(
      tf.tensor2d([
        [0.5, 0.25],
        [1, 2],
      ]),
      true,
      'q',
    );
    const opt = new AdamW([p], opts);
    opt.step(
      {
        q: tf.tensor2d([
          [0.1, 0.2],
          [0.3, 0.4],
        ]),
      },
      0.01,
    );
    const st = opt.getState();
    const decoded = decodeTensors(encodeTensors(st.tensors));
    const p2 = tf.variable(
      tf.tensor2d([
        [0.5, 0.25],
        [1, 2],
      ]),
      true,
      'q2',
    );
    const opt2 = new AdamW([p2], opts);
    // names differ by variable: remap for the check
    opt2.setState({ t: st.t, tensors: { 'm/q2': decoded['m/q'], 'v/q2': decoded['v/q'] } });
    expect(Array.from(opt2.getState().tensors['m/q2'].data)).toEqual(Array.from(st.tensors['m/q'].data));
    expect(opt2.stepCount).toBe(1);
  });
});
