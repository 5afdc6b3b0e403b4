/**
 * Grouped-query attention in the graph, with a host-owned key/value cache (the layout of the lab's own decoder graph,
 * src/main/compute/ortDecoder.ts, extended to grouped KV heads, Qwen3's q/k norms and rotary embeddings).
 *
 * The cache is not concatenated inside the graph: the host keeps it in fixed-capacity buffers (`cap` slots) that
 * onnxruntime reads in place, and the graph returns only the keys and values of the S appended columns, which the
 * host writes into the next free slots. Attention over [cache | new] is split at the scores and joined again:
 *   scores = [q·cacheKᵀ | q·kᵀ] + bias      bias [B,1,S,cap+S]: unwritten slots and pads −1e9
 *   ctx    = p_cache·cacheV + p_new·v        (one softmax over all cap+S keys, then Split at cap)
 * which is the same softmax as over the concatenated keys. Keys are cached transposed ([B,KV,D,cap]) so the scores
 * are a plain MatMul. A prefill or a full-sequence scoring call passes a cache of 0 slots.
 *
 * Query heads are grouped by the KV head they share (head h = kv·G + g uses KV head kv, Transformers' repeat_kv
 * order): queries become [B, KV, G·S, D] and meet the [B, KV, ·, D] keys in one batched MatMul, so keys and values are
 * never repeated per query head; the bias is tiled G times along its query axis to match (rows ordered g, then s).
 * The 1/√D scale is folded into the query projection (into q_norm's weight for Qwen3, whose norm comes first).
 */
import type { LlmConfig } from '../config';
import type { LlmTensors } from '../causalLm';
import { attrInts, attrInt, type OnnxGraph } from '../../util/onnxGraph';
import { linearNode } from './linear';
import { rmsNormNode } from './rmsNorm';
import { ropeNode } from './rope';

/** Values shared by every layer, built once by the exporter. */
export interface AttentionInputs {
  /** cos and signed sin, [B·S, 1, D]. */
  cos: string;
  sinSigned: string;
  /** The additive bias tiled to [B, 1, G·S, cap+S]. */
  bias: string;
  /** Dynamic shapes: [B, S, KV, G, D] and [B, S, KV, D]. */
  q5: string;
  kv4: string;
  /** [cap, S]: where the softmax output splits into cache and new columns. */
  splitAt: string;
}

/** x [B·S, d] → attention output [B·S, d]; writes the graph outputs new_key_t_<l> and new_value_<l>. */
export function attentionNode(g: OnnxGraph, cfg: LlmConfig, tensors: LlmTensors, l: number, x: string, a: AttentionInputs): string {
  const { hiddenSize: d, numHeads: H, numKvHeads: KV, headDim: D } = cfg;
  const G = H / KV;
  const p = `model.layers.${l}.self_attn.`;
  const scale = 1 / Math.sqrt(D);
  let q = g.node('Reshape', [linearNode(g, x, `${p}q_proj`, tensors, H * D, d, cfg.qkNorm ? 1 : scale), g.ints([-1, H, D])], 'q3');
  let k = g.node('Reshape', [linearNode(g, x, `${p}k_proj`, tensors, KV * D, d), g.ints([-1, KV, D])], 'k3');
  const v = g.node('Reshape', [linearNode(g, x, `${p}v_proj`, tensors, KV * D, d), a.kv4], 'v4');
  if (cfg.qkNorm) {
    const qn = tensors[`${p}q_norm.weight`];
    q = rmsNormNode(
      g,
      q,
      g.float(
        `${p}q_norm.weight_scaled`,
        [D],
        qn.map((w) => w * scale),
      ),
      cfg.rmsNormEps,
    );
    k = rmsNormNode(g, k, g.float(`${p}k_norm.weight`, [D], tensors[`${p}k_norm.weight`]), cfg.rmsNormEps);
  }
  q = ropeNode(g, q, a.cos, a.sinSigned, D);
  k = ropeNode(g, k, a.cos, a.sinSigned, D);
  // New keys leave the graph already in the cache's transposed layout; the new-column scores use them as they are.
  const kT = g.node('Transpose', [g.node('Reshape', [k, a.kv4], 'k4')], 'kt', [attrInts('perm', [0, 2, 3, 1])], [`new_key_t_${l}`]);
  const vh = g.node('Transpose', [v], 'vh', [attrInts('perm', [0, 2, 1, 3])], [`new_value_${l}`]);
  const qg = g.node(
    'Reshape',
    [g.node('Transpose', [g.node('Reshape', [q, a.q5], 'q5')], 'qt', [attrInts('perm', [0, 2, 3, 1, 4])]), g.ints([0, 0, -1, D])],
    'qg',
  );
  const scores = g.node('Concat', [g.node('MatMul', [qg, `cache_key_t_${l}`], 'sc'), g.node('MatMul', [qg, kT], 'sn')], 'scores', [
    attrInt('axis', 3),
  ]);
  const probs = g.node('Softmax', [g.node('Add', [scores, a.bias], 'biased')], 'probs', [attrInt('axis', -1)]);
  const [pCache, pNew] = [g.tmp('pc'), g.tmp('pn')];
  g.node('Split', [probs, a.splitAt], 'psplit', [attrInt('axis', 3)], [pCache, pNew]);
  const ctx = g.node('Add', [g.node('MatMul', [pCache, `cache_value_${l}`], 'cc'), g.node('MatMul', [pNew, vh], 'cn')], 'ctx');
  const heads = g.node('Transpose', [g.node('Reshape', [ctx, g.ints([0, 0, G, -1, D])], 'c5')], 'ct', [attrInts('perm', [0, 3, 1, 2, 4])]);
  return linearNode(g, g.node('Reshape', [heads, g.ints([-1, H * D])], 'merged'), `${p}o_proj`, tensors, d, H * D);
}

/**
 * The graph's attn_bias [B·S, cap+S] from the generation loop's bias [B·S, P+S] (keys 0..P+S−1): cache slots 0..P−1
 * as given, the unwritten slots P..cap−1 masked, then the S new columns.
 */
export function cacheBias(bias: Float32Array, rows: number, P: number, S: number, cap: number): Float32Array {
  const K = P + S;
  const W = cap + S;
  if (bias.length !== rows * K) throw new Error(`cacheBias: expected ${rows}×${K} values, got ${bias.length}`);
  if (P > cap) throw new Error(`cacheBias: ${P} cached columns exceed the capacity ${cap}`);
  const out = new Float32Array(rows * W);
  for (let r = 0; r < rows; r++) {
    out.set(bias.subarray(r * K, r * K + P), r * W);
    out.fill(-1e9, r * W + P, r * W + cap);
    out.set(bias.subarray(r * K + P, r * K + K), r * W + cap);
  }
  return out;
}
