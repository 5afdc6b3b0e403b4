/**
 * The generation graph for onnxruntime-node: the policy of src/core/agent/onnxExport.ts with a host-owned,
 * fixed-capacity KV cache, so a decoding step moves only the new column in and out of onnxruntime.
 *
 * Why: with the full-sequence graph (past_key → Concat → present_key) every step copies the whole cache twice —
 * Concat inside the graph, then the binding copies each present tensor into a fresh JS buffer — and feeds it back.
 * Measured on small (6 layers, 16 rows, ~100 cached columns) a step's run took 25–38 ms with the presents fetched
 * and 10–15 ms fetching the logits alone; the cache traffic, not the math, set the pace.
 *
 * Here the cache lives in JS typed arrays allocated once per generate() call with room for the whole rollout
 * (prompt + new tokens). The binding wraps input buffers without copying, so the graph reads the cache in place and
 * returns only the keys/values of the appended columns, which the host writes into the next free slots.
 * Attention is split in two and joined at the scores, which is the same softmax as over the concatenated keys:
 *   scores = [q·cacheKᵀ | q·kᵀ] + bias        bias [B,1,S,cap+S]: slots not yet written (and pads) are −1e9
 *   ctx    = p_cache·cacheV + p_self·v        (softmax, then Split at cap)
 * Keys are cached transposed ([B,H,dh,cap]) so the scores are a plain MatMul with no Transpose of the cache.
 * Fewer, larger ops (each op costs a dispatch per step, which at nano's size is much of a decoding step): the residual
 * stream is 2-D so the linears are Gemm with their bias, residual add + LayerNorm is SkipLayerNormalization, the GELU
 * is FastGelu, and the query scale is folded into the query weights.
 *
 * Graph interface (B batch, S appended columns, cap cache slots, H heads, dh = dModel / H):
 *   inputs   input_ids int32 [B,S] · position_ids int32 [B,S] · attn_bias float [B,1,S,cap+S]
 *            cache_key_t_<l> float [B,H,dh,cap] · cache_value_<l> float [B,H,cap,dh]
 *   outputs  logits float [B,V] (last appended column only) · new_key_t_<l> float [B,H,dh,S] · new_value_<l> float [B,H,S,dh]
 * int32 ids: Gather takes int32 indices, so the host passes its Int32Arrays as they are (no BigInt64 copy).
 */
import * as ort from 'onnxruntime-node';
import { weightSpecs, type IncrementalLM, type ModelConfig, type ModelWeights } from '../../core/agent';
import { attrFloat, attrInt, attrInts, FLOAT, INT32, OnnxGraph, transposeRows } from '../../core/util/onnxGraph';
import { HostKvCache } from './hostKvCache';

/** onnxruntime's contrib-op domain (SkipLayerNormalization, FastGelu: kernels of every CPU build). */
const MS = 'com.microsoft';

/** Serialise the policy as the generation graph described above. */
export function exportDecoderOnnx(weights: ModelWeights): Uint8Array {
  const cfg = weights.config;
  const { dModel: d, nHeads: H, nLayers: L, vocabSize: V } = cfg;
  const dh = d / H;
  const g = new OnnxGraph();
  const tmp = g.tmp.bind(g);
  const node = g.node.bind(g);

  // The query scale 1/√dh is folded into the query columns of wqkv and bqkv (one Mul fewer per layer).
  const scale = 1 / Math.sqrt(dh);
  for (const spec of weightSpecs(cfg)) {
    let data = weights.tensors[spec.name];
    if (spec.name.endsWith('.attn.wqkv')) {
      data = data.slice();
      for (let r = 0; r < d; r++) for (let c = 0; c < d; c++) data[r * 3 * d + c] *= scale;
    } else if (spec.name.endsWith('.attn.bqkv')) {
      data = data.slice();
      for (let c = 0; c < d; c++) data[c] *= scale;
    }
    g.float(spec.name, spec.shape, data);
  }
  // Tied output projection as a transposed copy of wte, so the last MatMul needs no Transpose (as onnxExport.ts).
  g.float('wte_t', [d, V], transposeRows(weights.tensors.wte, V, d));
  g.int64('c_split3', [3], [d, d, d]);
  g.int64('c_last', [], [-1]);
  g.int64('c_hd', [2], [H, dh]);
  g.int64('c_d', [1], [d]);
  g.int64('c_rows', [2], [-1, d]);

  g.input('input_ids', INT32, ['batch', 'seq']);
  g.input('position_ids', INT32, ['batch', 'seq']);
  g.input('attn_bias', FLOAT, ['batch', 1, 'seq', 'keys']);
  g.output('logits', FLOAT, ['batch', V]);
  for (let l = 0; l < L; l++) {
    g.input(`cache_key_t_${l}`, FLOAT, ['batch', H, dh, 'cap']);
    g.input(`cache_value_${l}`, FLOAT, ['batch', H, 'cap', dh]);
    g.output(`new_key_t_${l}`, FLOAT, ['batch', H, dh, 'seq']);
    g.output(`new_value_${l}`, FLOAT, ['batch', H, 'seq', dh]);
  }

  const layerNorm = (x: string, gain: string, b: string): string =>
    node('LayerNormalization', [x, gain, b], 'ln', [attrInt('axis', -1), attrFloat('epsilon', 1e-5)]);

  // Where the joined scores split back into (cache, self): [cap, S], read off the input shapes once.
  const splitAt = node(
    'Concat',
    [
      node('Shape', ['cache_value_0'], 'cap', [attrInt('start', 2), attrInt('end', 3)]),
      node('Shape', ['input_ids'], 'seq', [attrInt('start', 1), attrInt('end', 2)]),
    ],
    'split_at',
    [attrInt('axis', 0)],
  );

  // [B, S, H, dh] and [B, S, d] from the batch's shape: the residual stream below is 2-D, so Reshape's 0 (copy the
  // input's dim) cannot supply B and S.
  const heads4 = node('Concat', [node('Shape', ['input_ids'], 'bs'), 'c_hd'], 'heads4', [attrInt('axis', 0)]);
  const model3 = node('Concat', [node('Shape', ['input_ids'], 'bs'), 'c_d'], 'model3', [attrInt('axis', 0)]);
  const emb = node(
    'Add',
    [
      node('Gather', ['wte', 'input_ids'], 'tok', [attrInt('axis', 0)]),
      node('Gather', ['wpe', 'position_ids'], 'pos', [attrInt('axis', 0)]),
    ],
    'emb',
  );
  // Keys leave the graph already transposed to the cache's layout [B,H,dh,S]; the self scores use them as they are.
  const keyT = (k: string, l: number): string =>
    node('Transpose', [node('Reshape', [k, heads4], 'rs')], 'kth', [attrInts('perm', [0, 2, 3, 1])], [`new_key_t_${l}`]);
  const attention = (qh: string, kT: string, vh: string, l: number): string => {
    const sCache = node('MatMul', [qh, `cache_key_t_${l}`], 'sc');
    const sSelf = node('MatMul', [qh, kT], 'ss');
    const scores = node('Add', [node('Concat', [sCache, sSelf], 'scores', [attrInt('axis', 3)]), 'attn_bias'], 'biased');
    const probs = node('Softmax', [scores], 'probs', [attrInt('axis', -1)]);
    const [pCache, pSelf] = [tmp('pc'), tmp('ps')];
    node('Split', [probs, splitAt], 'psplit', [attrInt('axis', 3)], [pCache, pSelf]);
    const ctx = node('Add', [node('MatMul', [pCache, `cache_value_${l}`], 'cc'), node('MatMul', [pSelf, vh], 'cs')], 'ctx');
    return node('Transpose', [ctx], 'ctxt', [attrInts('perm', [0, 2, 1, 3])]);
  };

  // 2-D residual stream [B·S, d] so every linear is one Gemm (bias included), residual add + LayerNorm is one
  // SkipLayerNormalization and the MLP's tanh-GELU one FastGelu (onnxruntime's com.microsoft CPU kernels).
  let x = node('Reshape', [emb, 'c_rows'], 'x2');
  let pending: string | null = null;
  // SkipLayerNormalization(input, skip) → (LayerNorm(input + skip), …, input + skip): the new residual stream is its
  // 4th output (the 2nd and 3rd, mean and inverse std, are not needed).
  // Pushed by hand, not through node(), which would name it n_SkipLayerNormalization_N: the graph keeps its names.
  const skipLn = (input: string, skip: string, gain: string, b: string): [string, string] => {
    const [out, sum] = [tmp('sln'), tmp('sum')];
    g.nodes.push({
      opType: 'SkipLayerNormalization',
      domain: MS,
      input: [input, skip, gain, b],
      output: [out, '', '', sum],
      name: tmp('n_SkipLN'),
      attribute: [attrFloat('epsilon', 1e-5)],
    });
    return [out, sum];
  };
  const gemm = (a: string, w: string, b: string): string => node('Gemm', [a, w, b], 'gemm');
  for (let l = 0; l < L; l++) {
    const p = `h${l}.`;
    let a: string;
    if (pending === null) a = layerNorm(x, `${p}ln1.g`, `${p}ln1.b`);
    else [a, x] = skipLn(pending, x, `${p}ln1.g`, `${p}ln1.b`);
    const [q, k, v] = [tmp('q'), tmp('k'), tmp('v')];
    node('Split', [gemm(a, `${p}attn.wqkv`, `${p}attn.bqkv`), 'c_split3'], 'split', [attrInt('axis', 1)], [q, k, v]);
    const qh = node('Transpose', [node('Reshape', [q, heads4], 'rs')], 'qh', [attrInts('perm', [0, 2, 1, 3])]);
    const vh = node('Transpose', [node('Reshape', [v, heads4], 'rs')], 'vh', [attrInts('perm', [0, 2, 1, 3])], [`new_value_${l}`]);
    const ctx = node('Reshape', [attention(qh, keyT(k, l), vh, l), 'c_rows'], 'ctxr');
    let b: string;
    [b, x] = skipLn(gemm(ctx, `${p}attn.wo`, `${p}attn.bo`), x, `${p}ln2.g`, `${p}ln2.b`);
    const h = gemm(b, `${p}mlp.w1`, `${p}mlp.b1`);
    // FastGelu is the tanh approximation with the model's constants: 0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³))).
    const gelu = node('FastGelu', [h], 'gelu', [], undefined, MS);
    pending = gemm(gelu, `${p}mlp.w2`, `${p}mlp.b2`);
  }
  // lnf over every column costs little next to the projection (done for the last column only) and saves an Add.
  const hf = pending === null ? layerNorm(x, 'lnf.g', 'lnf.b') : skipLn(pending, x, 'lnf.g', 'lnf.b')[0];
  const last = node('Gather', [node('Reshape', [hf, model3], 'hf3'), 'c_last'], 'last', [attrInt('axis', 1)]);
  node('MatMul', [last, 'wte_t'], 'logits', [], ['logits']);

  // The standard opset and, for SkipLayerNormalization and FastGelu, onnxruntime's com.microsoft (version 1).
  return g.encode('policy_decoder', 17);
}

/**
 * IncrementalLM over the decoder graph: the cache for `capacity` columns (hostKvCache.ts) is allocated at begin() and
 * filled column by column; appending past the capacity is an error (the engine sizes it to prompt + maxNewTokens).
 */
export class OrtDecoderLM implements IncrementalLM {
  private readonly cache: HostKvCache;

  constructor(
    readonly config: ModelConfig,
    private readonly session: () => ort.InferenceSession,
    capacity: number,
  ) {
    // The lab's model has as many key/value heads as query heads.
    const shape = { layers: config.nLayers, kvHeads: config.nHeads, headDim: config.dModel / config.nHeads };
    this.cache = new HostKvCache(shape, capacity, 'onnxruntime decoder');
  }

  begin(batch: number): void {
    this.cache.begin(batch);
  }

  async append(tokens: Int32Array, positions: Int32Array, bias: Float32Array, S: number): Promise<Float32Array> {
    const B = this.cache.batch;
    const feeds = this.cache.feeds(bias, S);
    const out = await this.session().run({
      input_ids: new ort.Tensor('int32', tokens, [B, S]),
      position_ids: new ort.Tensor('int32', positions, [B, S]),
      ...feeds,
    });
    this.cache.store(out, S);
    return out.logits.data as Float32Array;
  }

  end(): void {
    this.cache.end();
  }
}
