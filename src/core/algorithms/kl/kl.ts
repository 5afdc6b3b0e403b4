import * as tf from '@tensorflow/tfjs-core';
import type { KlFn } from './types';

/** `kl` (k1): log π_θ − log π_ref. Unbiased for KL(π_θ‖π_ref) in expectation, high variance, can be < 0. */
export const k1: KlFn = (logProb, refLogProb) => ({ value: tf.sub(logProb, refLogProb) as tf.Tensor2D, metrics: {} });
