/**
 * One pre-norm decoder layer: h = x + attention(RMSNorm₁(x)); out = h + MLP(RMSNorm₂(h)).
 */
import * as tf from '@tensorflow/tfjs';
import type { LlmConfig } from './config';
import { attention, type AttentionProjections, type KvEntry } from './attention';
import { swiGluMlp, type MlpProjections } from './mlp';
import { rmsNorm } from './rmsNorm';

export interface DecoderLayerParts {
  inputNorm: tf.Tensor;
  postAttentionNorm: tf.Tensor;
  attn: AttentionProjections;
  mlp: MlpProjections;
}

export function decoderLayer(
  cfg: LlmConfig,
  parts: DecoderLayerParts,
  x: tf.Tensor2D,
  N: number,
  T: number,
  cos: tf.Tensor4D,
  sin: tf.Tensor4D,
  bias: tf.Tensor4D,
  past: KvEntry | null,
): { out: tf.Tensor2D; present: KvEntry } {
  const a = attention(cfg, parts.attn, rmsNorm(x, parts.inputNorm, cfg.rmsNormEps), N, T, cos, sin, bias, past);
  const h = tf.add(x, a.out) as tf.Tensor2D;
  const out = tf.add(h, swiGluMlp(parts.mlp, rmsNorm(h, parts.postAttentionNorm, cfg.rmsNormEps))) as tf.Tensor2D;
  return { out, present: a.present };
}
