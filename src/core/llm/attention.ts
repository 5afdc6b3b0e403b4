/**
 * Grouped-query causal self-attention (Ainslie et al. 2023; multi-head when KV heads = heads, multi-query when 1) with
 * rotary embeddings, Qwen3's per-head q/k RMSNorm, and an optional key/value cache for generation.
 *
 * Query heads are grouped by the KV head they share (head h uses KV head ⌊h / (H/KV)⌋, Transformers' repeat_kv
 * order), so the scores are one batched matMul of [N, KV, (H/KV)·T, D] queries with [N, KV, K, D] keys: the keys and
 * values are never copied per query head.
 *
 * Masking is an additive bias [N, 1, T, K] (0 = attend, −1e9 = hidden) that the caller builds from causality and
 * padding; every real query sees at least itself, so hidden keys get exactly zero weight.
 */
import * as tf from '@tensorflow/tfjs';
import type { LlmConfig } from './config';
import { applyRope } from './rope';
import { rmsNorm } from './rmsNorm';

export interface AttentionWeights {
  q: tf.Tensor2D;
  k: tf.Tensor2D;
  v: tf.Tensor2D;
  o: tf.Tensor2D;
  qBias?: tf.Tensor;
  kBias?: tf.Tensor;
  vBias?: tf.Tensor;
  oBias?: tf.Tensor;
  qNorm?: tf.Tensor;
  kNorm?: tf.Tensor;
}

/** Projections are passed in as functions so that adapters (LoRA) can wrap them: (input [N·T, d]) → output. */
export interface AttentionProjections {
  q: (x: tf.Tensor2D) => tf.Tensor2D;
  k: (x: tf.Tensor2D) => tf.Tensor2D;
  v: (x: tf.Tensor2D) => tf.Tensor2D;
  o: (x: tf.Tensor2D) => tf.Tensor2D;
  qNorm?: tf.Tensor;
  kNorm?: tf.Tensor;
}

/** A type alias, not an interface, so that tf.tidy accepts it as a TensorContainer. */
export type KvEntry = {
  /** [N, KV, P, D], rotary already applied. */
  k: tf.Tensor4D;
  v: tf.Tensor4D;
};

/**
 * x [N·T, d] → [N·T, d]. cos/sin [N, T, 1, D]; bias [N, 1, T, P+T]. With `past` (P cached columns) the new keys and
 * values are appended; the returned `present` holds all P+T columns.
 */
export function attention(
  cfg: LlmConfig,
  p: AttentionProjections,
  x: tf.Tensor2D,
  N: number,
  T: number,
  cos: tf.Tensor4D,
  sin: tf.Tensor4D,
  bias: tf.Tensor4D,
  past: KvEntry | null,
): { out: tf.Tensor2D; present: KvEntry } {
  const { numHeads: H, numKvHeads: KV, headDim: D } = cfg;
  const G = H / KV;
  let q = tf.reshape(p.q(x), [N, T, H, D]) as tf.Tensor4D;
  let k = tf.reshape(p.k(x), [N, T, KV, D]) as tf.Tensor4D;
  const v = tf.reshape(p.v(x), [N, T, KV, D]) as tf.Tensor4D;
  if (p.qNorm && p.kNorm) {
    q = rmsNorm(q, p.qNorm, cfg.rmsNormEps);
    k = rmsNorm(k, p.kNorm, cfg.rmsNormEps);
  }
  q = applyRope(q, cos, sin);
  k = applyRope(k, cos, sin);
  let kAll = tf.transpose(k, [0, 2, 1, 3]) as tf.Tensor4D; // [N, KV, T, D]
  let vAll = tf.transpose(v, [0, 2, 1, 3]) as tf.Tensor4D;
  if (past) {
    kAll = tf.concat([past.k, kAll], 2);
    vAll = tf.concat([past.v, vAll], 2);
  }
  const K = kAll.shape[2];
  // [N, T, H, D] → [N, KV, G·T, D]: heads h = kv·G + g, rows ordered (g, t).
  const qg = tf.reshape(tf.transpose(tf.reshape(q, [N, T, KV, G, D]), [0, 2, 3, 1, 4]), [N, KV, G * T, D]);
  const scores = tf.mul(tf.matMul(qg, kAll, false, true), 1 / Math.sqrt(D)); // [N, KV, G·T, K]
  const masked = tf.add(tf.reshape(scores, [N, KV, G, T, K]), tf.reshape(bias, [N, 1, 1, T, K]));
  const probs = tf.reshape(tf.softmax(masked), [N, KV, G * T, K]);
  const ctx = tf.matMul(probs, vAll); // [N, KV, G·T, D]
  const merged = tf.reshape(tf.transpose(tf.reshape(ctx, [N, KV, G, T, D]), [0, 3, 1, 2, 4]), [N * T, H * D]) as tf.Tensor2D;
  return { out: p.o(merged), present: { k: kAll, v: vAll } };
}
