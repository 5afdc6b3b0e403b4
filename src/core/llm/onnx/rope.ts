/**
 * Rotary embeddings in the graph, and the host-side tables it reads.
 *
 * The angle tables come in as inputs (`rope_cos`, `rope_sin` [B, S, head_dim]) computed on the host by the same
 * `ropeTables` the tfjs model uses (src/core/llm/rope.ts: every rope_scaling variant, float32 angles as PyTorch), so
 * the graph needs no position table and no variant logic, and both engines rotate by bit-identical cos/sin.
 * rotate_half(x) = (−x₂, x₁) is folded into the sine: the host passes sin with its first half negated, and the graph
 * computes x·cos + (x₂, x₁)·sin± — one Neg fewer per rotation, the same values (negation is exact).
 */
import { ropeTables } from '../rope';
import { attrInt, type OnnxGraph } from '../../util/onnxGraph';

/** x [rows, heads, D] rotated by cos / signed sin [rows, 1, D]. */
export function ropeNode(g: OnnxGraph, x: string, cos: string, sinSigned: string, D: number): string {
  const [x1, x2] = [g.tmp('x1'), g.tmp('x2')];
  g.node('Split', [x, g.ints([D / 2, D / 2])], 'rsplit', [attrInt('axis', -1)], [x1, x2]);
  const swapped = g.node('Concat', [x2, x1], 'swap', [attrInt('axis', -1)]);
  return g.node('Add', [g.node('Mul', [x, cos], 'xc'), g.node('Mul', [swapped, sinSigned], 'xs')], 'rope');
}

/** The graph's rope inputs for these positions: cos and sin [n, D] with sin's first half negated. */
export function ropeFeeds(
  freq: { invFreq: Float32Array; scale: number },
  positions: ArrayLike<number>,
): { cos: Float32Array; sinSigned: Float32Array } {
  const { cos, sin } = ropeTables(freq, positions);
  const half = freq.invFreq.length;
  const D = 2 * half;
  for (let t = 0; t < positions.length; t++) for (let i = 0; i < half; i++) sin[t * D + i] = -sin[t * D + i];
  return { cos, sinSigned: sin };
}
