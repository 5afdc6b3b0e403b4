/**
 * The SwiGLU block in the graph: down(silu(gate(x)) ⊙ up(x)), silu(z) = z·σ(z), as src/core/llm/mlp.ts.
 */
import type { LlmConfig } from '../config';
import type { LlmTensors } from '../causalLm';
import type { OnnxGraph } from '../../util/onnxGraph';
import { linearNode } from './linear';

export function mlpNode(g: OnnxGraph, cfg: LlmConfig, tensors: LlmTensors, l: number, x: string): string {
  const p = `model.layers.${l}.mlp.`;
  const { hiddenSize: d, intermediateSize: f } = cfg;
  const gate = linearNode(g, x, `${p}gate_proj`, tensors, f, d);
  const up = linearNode(g, x, `${p}up_proj`, tensors, f, d);
  const act = g.node('Mul', [g.node('Mul', [gate, g.node('Sigmoid', [gate], 'sig')], 'silu'), up], 'glu');
  return linearNode(g, act, `${p}down_proj`, tensors, d, f);
}
