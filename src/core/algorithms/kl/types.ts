import type * as tf from '@tensorflow/tfjs-core';
import type { TensorResult } from '../types';

/** KL estimator names, as verl's `kl_loss_type` / `kl_penalty` (k1, abs, k2, k3 — Schulman 2020). */
export type KlName = 'kl' | 'abs' | 'mse' | 'low_var_kl';

/**
 * One signature: log π_θ [N,T] (differentiable) and log π_ref [N,T] (constant) → per-token estimate [N,T].
 * No metrics of its own (the caller aggregates and logs actor/kl_loss).
 */
export type KlFn = (logProb: tf.Tensor2D, refLogProb: tf.Tensor2D) => TensorResult<tf.Tensor2D>;
