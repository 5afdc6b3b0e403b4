/**
 * RMSNorm in the graph: w · x / √(mean(x²) + ε) over the last axis, as src/core/llm/rmsNorm.ts. Spelled
 * Pow → ReduceMean → Add → Sqrt → Div → Mul, the pattern onnxruntime's graph optimiser fuses into one
 * SimplifiedLayerNormalization kernel (float32 inside); unfused it is the same arithmetic.
 */
import { attrInt, attrInts, type OnnxGraph } from '../../util/onnxGraph';

export function rmsNormNode(g: OnnxGraph, x: string, weight: string, eps: number): string {
  const ms = g.node('ReduceMean', [g.node('Pow', [x, g.scalar(2)], 'sq')], 'ms', [attrInts('axes', [-1]), attrInt('keepdims', 1)]);
  const rms = g.node('Sqrt', [g.node('Add', [ms, g.scalar(eps)], 'mse')], 'rms');
  return g.node('Mul', [g.node('Div', [x, rms], 'xn'), weight], 'rmsn');
}
