import * as tf from '@tensorflow/tfjs-core';
import { rowTokens, stopGradient } from '../tensor';
import type { PolicyLossInput } from './types';

/**
 * Sequence masking (GRPO_SM, spec §1.2e): keep row r iff Ā_r ≥ 0 or mean_t(log π_old − log π_θ) ≤ δ, with
 * UNclamped log-ratios. Returns the effective mask (rejected rows zeroed, so they leave both the loss and the
 * metric denominators) and the number of rejected rows that had at least one token. The test is computed on
 * detached values: it selects rows, it is not differentiated.
 */
export function sequenceMask(input: PolicyLossInput, delta: number): { mask: tf.Tensor2D; numMasked: tf.Scalar } {
  const { mask } = input;
  const tokens = rowTokens(mask);
  // Rows decided already (the trainer's whole-batch denominator pass, chunked or K > 1): the same rows here.
  const keepF = input.seqKeep ?? keptRows(input, mask, tokens, delta);
  const hasTokens = tf.cast(tf.greater(tokens, 0), 'float32');
  const numMasked = tf.sum(tf.mul(tf.sub(1, keepF), hasTokens)) as tf.Scalar;
  return { mask: tf.mul(mask, tf.expandDims(keepF, 1)) as tf.Tensor2D, numMasked };
}

/** The test itself: 1 for a row kept, 0 for one masked, as a constant [N]. */
function keptRows(input: PolicyLossInput, mask: tf.Tensor2D, tokens: tf.Tensor1D, delta: number): tf.Tensor1D {
  const len = tf.maximum(tokens, 1);
  const advMean = tf.div(tf.sum(tf.mul(input.advantages, mask), 1), len);
  const drift = tf.div(tf.sum(tf.mul(tf.sub(input.oldLogProb, stopGradient(input.logProb)), mask), 1), len);
  const keep = tf.maximum(tf.cast(tf.greaterEqual(advMean, 0), 'float32'), tf.cast(tf.greaterEqual(delta, drift), 'float32'));
  // Rebuilt from its values so the selection is a constant, off the gradient tape: otherwise every
  // comparison downstream of the mask (e.g. seq-mean-token-mean's "row has tokens") would sit on the tape
  // path, and tfjs cannot backpropagate through comparison ops. N numbers per mini-batch: a negligible sync.
  const keepF = tf.tensor1d(keep.dataSync() as Float32Array, 'float32');
  keep.dispose();
  return keepF;
}

/** The mask a loss uses: the sequence-masked one when enabled, else the input mask and 0 masked rows. */
export function effectiveMask(input: PolicyLossInput, seqMask: { enabled: boolean; delta: number }) {
  if (!seqMask.enabled) return { mask: input.mask, numMasked: tf.scalar(0) };
  return sequenceMask(input, seqMask.delta);
}
