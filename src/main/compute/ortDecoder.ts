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
import onnxProto from 'onnx-proto';
import * as ort from 'onnxruntime-node';
import { weightSpecs, type IncrementalLM, type ModelConfig, type ModelWeights } from '../../core/agent';
import { HostKvCache } from './hostKvCache';

const { onnx } = onnxProto;
type INodeProto = onnxProto.onnx.INodeProto;
type ITensorProto = onnxProto.onnx.ITensorProto;
type IValueInfoProto = onnxProto.onnx.IValueInfoProto;
type IAttributeProto = onnxProto.onnx.IAttributeProto;

// ONNX TensorProto.DataType and AttributeProto.AttributeType codes (onnx.proto).
const FLOAT = 1;
const INT32 = 6;
const INT64 = 7;
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_INTS = 7;

/** onnxruntime's contrib-op domain (SkipLayerNormalization, FastGelu: kernels of every CPU build). */
const MS = 'com.microsoft';

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function floatTensor(name: string, dims: number[], data: Float32Array): ITensorProto {
  // ONNX raw data is little-endian: on such hosts the bytes are copied as they are (an element loop over small's
  // 2.8M weights would cost every setWeights), elsewhere DataView swaps them.
  if (LITTLE_ENDIAN)
    return { name, dims, dataType: FLOAT, rawData: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)) };
  const raw = new Uint8Array(data.length * 4);
  const dv = new DataView(raw.buffer);
  for (let i = 0; i < data.length; i++) dv.setFloat32(i * 4, data[i], true);
  return { name, dims, dataType: FLOAT, rawData: raw };
}

function int64Tensor(name: string, dims: number[], values: number[]): ITensorProto {
  const raw = new Uint8Array(values.length * 8);
  const dv = new DataView(raw.buffer);
  values.forEach((v, i) => dv.setBigInt64(i * 8, BigInt(v), true));
  return { name, dims, dataType: INT64, rawData: raw };
}

function valueInfo(name: string, elemType: number, dims: Array<number | string>): IValueInfoProto {
  return {
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  };
}

const attrInt = (name: string, i: number): IAttributeProto => ({ name, type: ATTR_INT, i });
const attrInts = (name: string, ints: number[]): IAttributeProto => ({ name, type: ATTR_INTS, ints });
const attrFloat = (name: string, f: number): IAttributeProto => ({ name, type: ATTR_FLOAT, f });

/** Serialise the policy as the generation graph described above. */
export function exportDecoderOnnx(weights: ModelWeights): Uint8Array {
  const cfg = weights.config;
  const { dModel: d, nHeads: H, nLayers: L, vocabSize: V } = cfg;
  const dh = d / H;
  const nodes: INodeProto[] = [];
  const inits: ITensorProto[] = [];
  let counter = 0;
  const tmp = (hint: string): string => `${hint}_${counter++}`;
  const node = (opType: string, inputs: string[], hint: string, attribute: IAttributeProto[] = [], outputs?: string[]): string => {
    const outs = outputs ?? [tmp(hint)];
    nodes.push({ opType, input: inputs, output: outs, name: tmp(`n_${opType}`), attribute });
    return outs[0];
  };

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
    inits.push(floatTensor(spec.name, spec.shape, data));
  }
  // Tied output projection as a transposed copy of wte, so the last MatMul needs no Transpose (as onnxExport.ts).
  const wte = weights.tensors.wte;
  const wteT = new Float32Array(d * V);
  for (let v = 0; v < V; v++) for (let j = 0; j < d; j++) wteT[j * V + v] = wte[v * d + j];
  inits.push(floatTensor('wte_t', [d, V], wteT));
  inits.push(int64Tensor('c_split3', [3], [d, d, d]));
  inits.push(int64Tensor('c_last', [], [-1]));
  inits.push(int64Tensor('c_hd', [2], [H, dh]));
  inits.push(int64Tensor('c_d', [1], [d]));
  inits.push(int64Tensor('c_rows', [2], [-1, d]));

  const inputs: IValueInfoProto[] = [
    valueInfo('input_ids', INT32, ['batch', 'seq']),
    valueInfo('position_ids', INT32, ['batch', 'seq']),
    valueInfo('attn_bias', FLOAT, ['batch', 1, 'seq', 'keys']),
  ];
  const outputs: IValueInfoProto[] = [valueInfo('logits', FLOAT, ['batch', V])];
  for (let l = 0; l < L; l++) {
    inputs.push(
      valueInfo(`cache_key_t_${l}`, FLOAT, ['batch', H, dh, 'cap']),
      valueInfo(`cache_value_${l}`, FLOAT, ['batch', H, 'cap', dh]),
    );
    outputs.push(valueInfo(`new_key_t_${l}`, FLOAT, ['batch', H, dh, 'seq']), valueInfo(`new_value_${l}`, FLOAT, ['batch', H, 'seq', dh]));
  }

  const layerNorm = (x: string, g: string, b: string): string =>
    node('LayerNormalization', [x, g, b], 'ln', [attrInt('axis', -1), attrFloat('epsilon', 1e-5)]);

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
  const skipLn = (input: string, skip: string, g: string, b: string): [string, string] => {
    const [out, sum] = [tmp('sln'), tmp('sum')];
    nodes.push({
      opType: 'SkipLayerNormalization',
      domain: MS,
      input: [input, skip, g, b],
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
    const gelu = tmp('gelu');
    // FastGelu is the tanh approximation with the model's constants: 0.5·h·(1 + tanh(√(2/π)·(h + 0.044715·h³))).
    nodes.push({ opType: 'FastGelu', domain: MS, input: [h], output: [gelu], name: tmp('n_FastGelu'), attribute: [] });
    pending = gemm(gelu, `${p}mlp.w2`, `${p}mlp.b2`);
  }
  // lnf over every column costs little next to the projection (done for the last column only) and saves an Add.
  const hf = pending === null ? layerNorm(x, 'lnf.g', 'lnf.b') : skipLn(pending, x, 'lnf.g', 'lnf.b')[0];
  const last = node('Gather', [node('Reshape', [hf, model3], 'hf3'), 'c_last'], 'last', [attrInt('axis', 1)]);
  node('MatMul', [last, 'wte_t'], 'logits', [], ['logits']);

  const model = {
    irVersion: 8,
    producerName: 'arlarena-lab',
    producerVersion: '1',
    opsetImport: [
      { domain: '', version: 17 },
      { domain: MS, version: 1 },
    ],
    graph: { name: 'policy_decoder', node: nodes, initializer: inits, input: inputs, output: outputs },
  };
  return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
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
