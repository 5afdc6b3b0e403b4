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
 * Pure JS (onnx-proto is protobufjs-generated code), so it lives in core; the session itself is in src/main/compute.
 */
import onnxProto from 'onnx-proto';
import { weightSpecs, type ModelWeights } from './model';

const { onnx } = onnxProto;
type INodeProto = onnxProto.onnx.INodeProto;
type ITensorProto = onnxProto.onnx.ITensorProto;
type IValueInfoProto = onnxProto.onnx.IValueInfoProto;
type IAttributeProto = onnxProto.onnx.IAttributeProto;

const FLOAT = 1;
const INT64 = 7;
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_INTS = 7;

export const ONNX_OPSET = 17;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** ONNX raw data is little-endian: copy the bytes directly on little-endian hosts (all we ship for). */
function floatTensor(name: string, dims: number[], data: Float32Array): ITensorProto {
  let raw: Uint8Array;
  if (LITTLE_ENDIAN) raw = new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  else {
    raw = new Uint8Array(data.length * 4);
    const dv = new DataView(raw.buffer);
    for (let i = 0; i < data.length; i++) dv.setFloat32(i * 4, data[i], true);
  }
  return { name, dims, dataType: FLOAT, rawData: raw };
}

function int64Tensor(name: string, values: number[]): ITensorProto {
  const raw = new Uint8Array(values.length * 8);
  const dv = new DataView(raw.buffer);
  values.forEach((v, i) => dv.setBigInt64(i * 8, BigInt(v), true));
  return { name, dims: [values.length], dataType: INT64, rawData: raw };
}

function valueInfo(name: string, elemType: number, dims: Array<number | string>): IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

const attrInt = (name: string, i: number): IAttributeProto => ({ name, type: ATTR_INT, i });
const attrInts = (name: string, ints: number[]): IAttributeProto => ({ name, type: ATTR_INTS, ints });
const attrFloat = (name: string, f: number): IAttributeProto => ({ name, type: ATTR_FLOAT, f });

/** Serialise the policy with its weights to ONNX bytes. */
export function exportOnnx(weights: ModelWeights): Uint8Array {
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

  for (const spec of weightSpecs(cfg)) {
    if (spec.name === 'wte') continue;
    inits.push(floatTensor(spec.name, spec.shape, weights.tensors[spec.name]));
  }
  const wte = weights.tensors.wte;
  inits.push(floatTensor('wte', [V, d], wte));
  const wteT = new Float32Array(d * V);
  for (let v = 0; v < V; v++) for (let j = 0; j < d; j++) wteT[j * V + v] = wte[v * d + j];
  inits.push(floatTensor('wte_t', [d, V], wteT));
  inits.push(int64Tensor('c_split3', [d, d, d]));
  inits.push(int64Tensor('c_heads_shape', [0, 0, H, dh]));
  inits.push(int64Tensor('c_model_shape', [0, 0, d]));
  inits.push(floatTensor('c_scale', [], new Float32Array([1 / Math.sqrt(dh)])));
  inits.push(floatTensor('c_half', [], new Float32Array([0.5])));
  inits.push(floatTensor('c_one', [], new Float32Array([1])));
  inits.push(floatTensor('c_gelu_a', [], new Float32Array([0.044715])));
  inits.push(floatTensor('c_gelu_b', [], new Float32Array([Math.sqrt(2 / Math.PI)])));

  const inputs: IValueInfoProto[] = [
    valueInfo('input_ids', INT64, ['batch', 'seq']),
    valueInfo('position_ids', INT64, ['batch', 'seq']),
    valueInfo('attn_bias', FLOAT, ['batch', 1, 'seq', 'total']),
  ];
  const outputs: IValueInfoProto[] = [valueInfo('logits', FLOAT, ['batch', 'seq', V])];
  for (let l = 0; l < L; l++) {
    inputs.push(valueInfo(`past_key_${l}`, FLOAT, ['batch', H, 'past', dh]), valueInfo(`past_value_${l}`, FLOAT, ['batch', H, 'past', dh]));
    outputs.push(
      valueInfo(`present_key_${l}`, FLOAT, ['batch', H, 'total', dh]),
      valueInfo(`present_value_${l}`, FLOAT, ['batch', H, 'total', dh]),
    );
  }

  const layerNorm = (x: string, g: string, b: string): string =>
    node('LayerNormalization', [x, g, b], 'ln', [attrInt('axis', -1), attrFloat('epsilon', 1e-5)]);
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

  const model = {
    irVersion: 8,
    producerName: 'arlarena-lab',
    producerVersion: '1',
    opsetImport: [{ domain: '', version: ONNX_OPSET }],
    graph: { name: 'policy', node: nodes, initializer: inits, input: inputs, output: outputs },
  };
  return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
}
