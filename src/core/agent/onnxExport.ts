/**
 * Export the policy to an ONNX ModelProto (IR 8, opset 17) with a KV cache, for onnxruntime-node rollouts.
 *
 * Graph interface (B = batch, S = new columns, P = cached columns, K = P + S, H heads, dh = dModel / H):
 *   inputs   input_ids int64 [B,S] · position_ids int64 [B,S] · attn_bias float [B,1,S,K] (0 = attend, −1e9 = masked)
 *            past_key_<l>, past_value_<l> float [B,H,P,dh] for every layer l (P = 0 on the first call)
 *   outputs  logits float [B,S,V] · present_key_<l>, present_value_<l> float [B,H,K,dh]
 * The host builds the attention bias (causality and left padding), so one graph serves prefill, incremental
 * decoding and full-sequence scoring. The same math as model.ts: pre-LN blocks, tanh-GELU, tied output
 * projection (exported as a transposed copy of wte so the last MatMul needs no Transpose).
 *
 * Pure JS (the graph builder, src/core/util/onnxGraph.ts, writes onnx-proto's protobufjs-generated messages), so it
 * lives in core; the session itself is in src/main/compute.
 */
import { attrFloat, attrInt, attrInts, FLOAT, INT64, OnnxGraph, transposeRows } from '../util/onnxGraph';
import { weightSpecs, type ModelWeights } from './model';

export const ONNX_OPSET = 17;

/** Serialise the policy with its weights to ONNX bytes. */
export function exportOnnx(weights: ModelWeights): Uint8Array {
  const cfg = weights.config;
  const { dModel: d, nHeads: H, nLayers: L, vocabSize: V } = cfg;
  const dh = d / H;
  const g = new OnnxGraph();
  const tmp = g.tmp.bind(g);
  const node = g.node.bind(g);

  for (const spec of weightSpecs(cfg)) {
    if (spec.name === 'wte') continue;
    g.float(spec.name, spec.shape, weights.tensors[spec.name]);
  }
  const wte = weights.tensors.wte;
  g.float('wte', [V, d], wte);
  g.float('wte_t', [d, V], transposeRows(wte, V, d));
  g.int64('c_split3', [3], [d, d, d]);
  g.int64('c_heads_shape', [4], [0, 0, H, dh]);
  g.int64('c_model_shape', [3], [0, 0, d]);
  g.float('c_scale', [], new Float32Array([1 / Math.sqrt(dh)]));
  g.float('c_half', [], new Float32Array([0.5]));
  g.float('c_one', [], new Float32Array([1]));
  g.float('c_gelu_a', [], new Float32Array([0.044715]));
  g.float('c_gelu_b', [], new Float32Array([Math.sqrt(2 / Math.PI)]));

  g.input('input_ids', INT64, ['batch', 'seq']);
  g.input('position_ids', INT64, ['batch', 'seq']);
  g.input('attn_bias', FLOAT, ['batch', 1, 'seq', 'total']);
  g.output('logits', FLOAT, ['batch', 'seq', V]);
  for (let l = 0; l < L; l++) {
    g.input(`past_key_${l}`, FLOAT, ['batch', H, 'past', dh]);
    g.input(`past_value_${l}`, FLOAT, ['batch', H, 'past', dh]);
    g.output(`present_key_${l}`, FLOAT, ['batch', H, 'total', dh]);
    g.output(`present_value_${l}`, FLOAT, ['batch', H, 'total', dh]);
  }

  const layerNorm = (x: string, gain: string, b: string): string =>
    node('LayerNormalization', [x, gain, b], 'ln', [attrInt('axis', -1), attrFloat('epsilon', 1e-5)]);
  const linear = (x: string, w: string, b: string): string => node('Add', [node('MatMul', [x, w], 'mm'), b], 'lin');
  const toHeads = (x: string): string =>
    node('Transpose', [node('Reshape', [x, 'c_heads_shape'], 'rs')], 'th', [attrInts('perm', [0, 2, 1, 3])]);

  let x = node(
    'Add',
    [
      node('Gather', ['wte', 'input_ids'], 'tok', [attrInt('axis', 0)]),
      node('Gather', ['wpe', 'position_ids'], 'pos', [attrInt('axis', 0)]),
    ],
    'emb',
  );
  for (let l = 0; l < L; l++) {
    const p = `h${l}.`;
    const a = layerNorm(x, `${p}ln1.g`, `${p}ln1.b`);
    const qkv = linear(a, `${p}attn.wqkv`, `${p}attn.bqkv`);
    const [q, k, v] = [tmp('q'), tmp('k'), tmp('v')];
    node('Split', [qkv, 'c_split3'], 'split', [attrInt('axis', 2)], [q, k, v]);
    const kAll = node('Concat', [`past_key_${l}`, toHeads(k)], 'kall', [attrInt('axis', 2)], [`present_key_${l}`]);
    const vAll = node('Concat', [`past_value_${l}`, toHeads(v)], 'vall', [attrInt('axis', 2)], [`present_value_${l}`]);
    const kT = node('Transpose', [kAll], 'kt', [attrInts('perm', [0, 1, 3, 2])]);
    const scores = node('Add', [node('MatMul', [toHeads(node('Mul', [q, 'c_scale'], 'qs')), kT], 'qk'), 'attn_bias'], 'biased');
    const probs = node('Softmax', [scores], 'probs', [attrInt('axis', -1)]);
    const ctx = node(
      'Reshape',
      [node('Transpose', [node('MatMul', [probs, vAll], 'ctx')], 'ctxt', [attrInts('perm', [0, 2, 1, 3])]), 'c_model_shape'],
      'ctxr',
    );
    x = node('Add', [x, linear(ctx, `${p}attn.wo`, `${p}attn.bo`)], 'res1');
    const b = layerNorm(x, `${p}ln2.g`, `${p}ln2.b`);
    const h = linear(b, `${p}mlp.w1`, `${p}mlp.b1`);
    const cube = node('Mul', [node('Mul', [h, h], 'sq'), h], 'cube');
    const inner = node('Mul', [node('Add', [h, node('Mul', [cube, 'c_gelu_a'], 'ga')], 'gi'), 'c_gelu_b'], 'gb');
    const gelu = node('Mul', [node('Mul', [h, 'c_half'], 'gh'), node('Add', [node('Tanh', [inner], 'tanh'), 'c_one'], 'g1')], 'gelu');
    x = node('Add', [x, linear(gelu, `${p}mlp.w2`, `${p}mlp.b2`)], 'res2');
  }
  const hf = layerNorm(x, 'lnf.g', 'lnf.b');
  node('MatMul', [hf, 'wte_t'], 'logits', [], ['logits']);

  return g.encode('policy', ONNX_OPSET);
}
