/**
 * The SwiGLU feed-forward block (Shazeer 2020) of Qwen and Llama: down(silu(gate(x)) ⊙ up(x)), silu(z) = z·σ(z).
 * Projections come in as functions so adapters can wrap them.
 */
import * as tf from '@tensorflow/tfjs';

export interface MlpProjections {
  gate: (x: tf.Tensor2D) => tf.Tensor2D;
  up: (x: tf.Tensor2D) => tf.Tensor2D;
  down: (x: tf.Tensor2D) => tf.Tensor2D;
}

export function swiGluMlp(p: MlpProjections, x: tf.Tensor2D): tf.Tensor2D {
  const g = p.gate(x);
  return p.down(tf.mul(tf.mul(g, tf.sigmoid(g)), p.up(x)) as tf.Tensor2D);
}
