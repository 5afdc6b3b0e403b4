/**
 * A Hugging Face linear layer in the graph: y = x·Wᵀ + b with W stored transposed ([in, out]) at export time, so the
 * product is a plain MatMul with a 2-D weight initializer — the form onnxruntime's kernels take without a Transpose,
 * and the form compute.rolloutPrecision=int8 quantises (src/main/compute/ortPrecision.ts).
 * `scale` multiplies W and b (the attention's 1/√head_dim folded into the query projection).
 */
import type { LlmTensors } from '../causalLm';
import { transposeRows, type OnnxGraph } from '../../util/onnxGraph';

export function linearNode(g: OnnxGraph, x: string, module: string, tensors: LlmTensors, out: number, inp: number, scale = 1): string {
  const w = tensors[`${module}.weight`];
  if (!w || w.length !== out * inp) throw new Error(`ONNX export: ${module}.weight should hold [${out}, ${inp}] values`);
  const y = g.node('MatMul', [x, g.float(`${module}.weight_t`, [inp, out], transposeRows(w, out, inp, scale))], 'mm');
  const b = tensors[`${module}.bias`];
  if (!b) return y;
  return g.node('Add', [y, g.float(`${module}.bias`, [out], scale === 1 ? b : b.map((v) => v * scale))], 'lin');
}
