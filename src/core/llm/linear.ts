/**
 * A linear layer with PyTorch's weight layout ([out, in], y = x·Wᵀ + b): the checkpoint's tensors are used as they
 * are, so weight names, shapes and gradients line up with Transformers' one for one. (On tfjs-wasm the lab's kernel
 * fix makes the transposed matMul as fast as a plain one: src/main/compute/wasmFixes.ts.)
 */
import * as tf from '@tensorflow/tfjs';

export function linear(x: tf.Tensor2D, weight: tf.Tensor, bias?: tf.Tensor): tf.Tensor2D {
  const y = tf.matMul(x, weight as tf.Tensor2D, false, true);
  return (bias ? tf.add(y, bias) : y) as tf.Tensor2D;
}
