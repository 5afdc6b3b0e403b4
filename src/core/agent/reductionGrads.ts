/**
 * The gradients of Mean and Sum without a ones tensor the size of the input.
 *
 * Why: tfjs 4.22 writes both as `dy · ones(x.shape)` (Mean then divides by the reduced size): `ones` fills a
 * Float32Array of x's size in a JS loop and copies it into the backend, then a Mul and a Div run over it. The
 * policy's LayerNorm takes two means over [rows·T, dModel] (≈ 370k floats at a 32-row mini-batch), five LayerNorms a
 * pass, so a backward pass filled, uploaded, multiplied and divided ten such arrays; in a `node --cpu-prof` of
 * `bench:rl` the fill alone was 0.36 of 27 s on the training thread.
 *
 * Here the reduced gradient is divided first (Mean) and then broadcast (tf.broadcastTo, the Tile kernel): every
 * element is dy / n as before — `dy · 1` is dy exactly and the division is the same IEEE division of the same two
 * floats — so the gradients, and every weight trained with them, are the same bits. Other dtypes than float32 keep
 * tfjs's own gradient.
 */
import * as tf from '@tensorflow/tfjs';

type GradFunc = tf.GradConfig['gradFunc'];

/** The input's shape with the reduced axes set to 1, and the number of elements each output value reduces. */
function reduced(x: tf.Tensor, axis: number | number[] | null | undefined): { expanded: number[]; size: number } {
  // As tfjs's parseAxisParam: no axis reduces every axis; negative axes count from the end.
  const r = x.rank;
  const axes = axis == null ? x.shape.map((_, i) => i) : (Array.isArray(axis) ? axis : [axis]).map((a) => (a < 0 ? r + a : a));
  const expanded = x.shape.slice();
  let size = 1;
  for (const a of axes) {
    size *= x.shape[a];
    expanded[a] = 1;
  }
  return { expanded, size };
}

function lean(kernelName: 'Mean' | 'Sum', stock: GradFunc): tf.GradConfig {
  return {
    kernelName,
    inputsToSave: ['x'],
    gradFunc: (dy, saved, attrs) => {
      const d = dy as tf.Tensor;
      const [x] = saved;
      if (d.dtype !== 'float32') return stock(dy, saved, attrs);
      const { expanded, size } = reduced(x, (attrs as unknown as { axis?: number | number[] | null }).axis);
      return {
        x: () => {
          const e = tf.reshape(d, expanded);
          return tf.broadcastTo(kernelName === 'Mean' ? tf.div(e, size) : e, x.shape);
        },
      };
    },
  };
}

let registered = false;

/** Register the two gradients once per process (tfjs's gradient registry is global, shared by every backend). */
export function registerReductionGrads(): void {
  if (registered) return;
  registered = true;
  for (const name of ['Mean', 'Sum'] as const) tf.registerGradient(lean(name, tf.getGradient(name).gradFunc));
}
