/**
 * The causal LM head: logits = RMSNorm_final(h) · Wᵀ, where W is `lm_head.weight` [V, d], or the token embedding
 * itself when `tie_word_embeddings` is set (Qwen2.5-0.5B, Qwen3-0.6B: the same tensor embeds and un-embeds, and its
 * gradient sums both uses).
 */
import * as tf from '@tensorflow/tfjs';

export function lmHead(hNormed: tf.Tensor2D, weight: tf.Tensor): tf.Tensor2D {
  return tf.matMul(hNormed, weight as tf.Tensor2D, false, true) as tf.Tensor2D;
}
