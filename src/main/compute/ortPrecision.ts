/**
 * compute.rolloutPrecision: the rollout engine's numerics, applied to the lab's exported ONNX graphs (the
 * full-sequence graph of src/core/agent/onnxExport.ts and the decoder graph of ortDecoder.ts) as a rewrite of the
 * ModelProto. The trainer keeps float32; only the behaviour policy changes — the way vLLM/SGLang sample in bf16 or
 * fp8 while FSDP/Megatron train in fp32, which is the train–inference mismatch rollout correction exists for.
 *
 * fp32  the graph as exported (bytes untouched).
 * fp16  every float initializer is stored as float16 and the graph computes on float16 tensors: float inputs are
 *       Cast to float16 on entry and float outputs Cast back to float32 on exit, so the host side (feeds, the
 *       decoder's float32 KV cache, log-softmax) is unchanged — the cache then holds float16 values, as a bf16
 *       engine's cache does. onnxruntime's CPU provider accepts the whole graph: an op without a float16 CPU kernel
 *       runs in float32 between casts it inserts (1.30, profiled on the decoder graph: Gather, Reshape, Shape,
 *       Transpose, Split, LayerNormalization and SkipLayerNormalization run float16 kernels; Gemm, MatMul, Add,
 *       Concat, Softmax and FastGelu — the last two expanded into their float32 primitives — do not), and it drops the
 *       float16 round trip between two such ops (measured: MatMul → Add in float16 equals float32 arithmetic rounded
 *       once at the end). So values are rounded to float16 wherever a float16-kernel op reads or writes them — the
 *       weights, embeddings, q/k/v and the KV cache, attention probabilities (at their Split), the attention output
 *       (at its Transpose), the residual stream and LayerNorm outputs (SkipLayerNormalization) — while a linear + GELU
 *       chain and the scores before softmax stay float32 inside, as fused bf16 GPU kernels keep fp32 accumulators.
 *       `attn_bias` is clamped to −30000 before its cast: its
 *       −1e9 mask would become −inf in float16, and a query with every key masked (left padding) would then give
 *       NaN (−inf − −inf) instead of a harmless uniform row.
 * int8  dynamic int8 quantisation of the weight matmuls, as onnxruntime's `quantize_dynamic` does: every MatMul or
 *       Gemm whose second input is a 2-D float initializer (the block linears and the tied output projection)
 *       becomes com.microsoft DynamicQuantizeMatMul — activations quantised per tensor to uint8 at run time
 *       (scale and zero point from the tensor's own min/max, ONNX DynamicQuantizeLinear's rule), weights stored as
 *       int8 with one symmetric scale per output column (per channel). Embeddings (Gather), LayerNorm, attention
 *       scores and softmax stay float32, as in vLLM's W8A8 schemes. DynamicQuantizeMatMul is a kernel of every
 *       onnxruntime CPU build (1.30 included); the standard-opset spelling, DynamicQuantizeLinear + MatMulInteger
 *       + Cast + Mul (opset 11/10, so valid at opset 17), is what onnxruntime fuses into it.
 */
import onnxProto from 'onnx-proto';
import type { RolloutPrecision } from '../../core/config/types';

const { onnx } = onnxProto;
type IModelProto = onnxProto.onnx.IModelProto;
type INodeProto = onnxProto.onnx.INodeProto;
type ITensorProto = onnxProto.onnx.ITensorProto;
type IValueInfoProto = onnxProto.onnx.IValueInfoProto;

export const ROLLOUT_PRECISIONS: readonly RolloutPrecision[] = ['fp32', 'fp16', 'int8'];

// ONNX TensorProto.DataType codes (onnx.proto).
const FLOAT = 1;
const INT8 = 3;
const FLOAT16 = 10;
const ATTR_INT = 2;
const MS = 'com.microsoft';
/** The float16-safe mask value for attn_bias (float16's largest finite value is 65504). */
const FP16_MASK = 30000;

/** Rewrite exported ONNX bytes for a rollout precision; fp32 returns the same bytes. */
export function withRolloutPrecision(bytes: Uint8Array, precision: RolloutPrecision): Uint8Array {
  if (precision === 'fp32') return bytes;
  const model = onnx.ModelProto.decode(bytes) as IModelProto;
  if (precision === 'fp16') toFloat16(model);
  else if (precision === 'int8') quantizeMatMulsInt8(model);
  else throw new Error(`compute.rolloutPrecision: unknown precision ${JSON.stringify(precision)}; known: ${ROLLOUT_PRECISIONS.join(', ')}`);
  return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
}

// ── float32 ↔ float16 ─────────────────────────────────────────────────────────────────────────────────────────

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE binary16 bits of a float32, rounded to nearest even (overflow → ±inf, NaN kept, subnormals rounded). */
export function float16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const man = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man !== 0 ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal (or zero) in half precision: shift the mantissa with its implicit 1 into place, rounding to even.
    if (e < -10) return sign;
    const m = man | 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = m & ((1 << shift) - 1);
    let h = m >>> shift;
    if (rest > half || (rest === half && (h & 1) === 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  // A carry out of the mantissa rolls into the exponent, and from the largest finite value into +inf: both right.
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) h++;
  return sign | h;
}

/** The float32 value of binary16 bits. */
export function float16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 0x1f) return m === 0 ? sign * Infinity : NaN;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** x rounded to the nearest float16 value (as a float32 number). */
export const roundToFloat16 = (x: number): number => float16Value(float16Bits(x));

// ── tensors ───────────────────────────────────────────────────────────────────────────────────────────────────

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function floatData(t: ITensorProto): Float32Array {
  const n = (t.dims ?? []).reduce((a, d) => a * Number(d), 1);
  if (t.rawData && t.rawData.length > 0) {
    const raw = t.rawData;
    // ONNX raw data is little-endian: on such hosts one aligned copy (an element loop costs ~100 ms on small's graphs).
    if (LITTLE_ENDIAN) return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + n * 4));
    const out = new Float32Array(n);
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    for (let i = 0; i < n; i++) out[i] = dv.getFloat32(i * 4, true);
    return out;
  }
  return Float32Array.from(t.floatData ?? []);
}

function rawOf(n: number, write: (dv: DataView) => void, bytesPer: number): Uint8Array {
  const raw = new Uint8Array(n * bytesPer);
  write(new DataView(raw.buffer));
  return raw;
}

const castNode = (input: string, output: string, to: number): INodeProto => ({
  opType: 'Cast',
  input: [input],
  output: [output],
  name: `prec_cast_${output}`,
  attribute: [{ name: 'to', type: ATTR_INT, i: to }],
});

function elemType(v: IValueInfoProto): number | null | undefined {
  return v.type?.tensorType?.elemType;
}

function renameInputs(nodes: INodeProto[], from: string, to: string): void {
  for (const n of nodes) if (n.input) n.input = n.input.map((i) => (i === from ? to : i));
}

// ── fp16 ──────────────────────────────────────────────────────────────────────────────────────────────────────

function toFloat16(model: IModelProto): void {
  const g = model.graph!;
  const nodes = [...(g.node ?? [])];
  for (const n of nodes) {
    if (n.opType === 'Cast' || n.opType === 'Constant' || n.opType === 'ConstantOfShape') {
      // The lab's graphs have none; a float-typed Cast target or constant would need rewriting too.
      throw new Error(`compute.rolloutPrecision=fp16: the graph has a ${n.opType} node (${n.name}), which this rewrite does not handle`);
    }
  }
  for (const t of g.initializer ?? []) {
    if (t.dataType !== FLOAT) continue;
    const data = floatData(t);
    const half = new Uint16Array(data.length);
    for (let i = 0; i < data.length; i++) half[i] = float16Bits(data[i]);
    t.rawData = LITTLE_ENDIAN
      ? new Uint8Array(half.buffer)
      : rawOf(data.length, (dv) => half.forEach((h, i) => dv.setUint16(i * 2, h, true)), 2);
    t.floatData = [];
    t.dataType = FLOAT16;
  }
  const entry: INodeProto[] = [];
  for (const input of g.input ?? []) {
    if (elemType(input) !== FLOAT) continue;
    const name = input.name!;
    const half = `${name}__fp16`;
    renameInputs(nodes, name, half);
    if (name === 'attn_bias') {
      const clamped = `${name}__clamped`;
      g.initializer!.push({
        name: 'prec_mask_min',
        dims: [],
        dataType: FLOAT,
        rawData: rawOf(1, (dv) => dv.setFloat32(0, -FP16_MASK, true), 4),
      });
      entry.push({ opType: 'Max', input: [name, 'prec_mask_min'], output: [clamped], name: 'prec_clamp_attn_bias' });
      entry.push(castNode(clamped, half, FLOAT16));
    } else entry.push(castNode(name, half, FLOAT16));
  }
  const exit: INodeProto[] = [];
  for (const output of g.output ?? []) {
    if (elemType(output) !== FLOAT) continue;
    const name = output.name!;
    const half = `${name}__fp16`;
    // The producer now writes the float16 tensor; every consumer inside the graph reads that one too.
    for (const n of nodes) if (n.output) n.output = n.output.map((o) => (o === name ? half : o));
    renameInputs(nodes, name, half);
    exit.push(castNode(half, name, FLOAT));
  }
  g.node = [...entry, ...nodes, ...exit];
  g.valueInfo = [];
}

// ── int8 ──────────────────────────────────────────────────────────────────────────────────────────────────────

/** Round half to even (numpy's rint, which onnxruntime's quantiser uses). */
function rint(x: number): number {
  const r = Math.round(x); // halves go up: a tie went up iff r − x = 0.5, and then an odd r steps back down
  return r - x === 0.5 && (r & 1) !== 0 ? r - 1 : r;
}

/**
 * Symmetric per-column int8 quantisation of a [K, N] row-major weight: scale_n = max_k |W[k,n]| / 127 (1 for an
 * all-zero column), q = rint(W / scale) in [−127, 127].
 */
export function quantizeColumnsInt8(w: Float32Array, K: number, N: number): { q: Int8Array; scale: Float32Array } {
  const scale = new Float32Array(N);
  for (let k = 0; k < K; k++) for (let n = 0; n < N; n++) scale[n] = Math.max(scale[n], Math.abs(w[k * N + n]));
  for (let n = 0; n < N; n++) scale[n] = scale[n] > 0 ? scale[n] / 127 : 1;
  const q = new Int8Array(K * N);
  for (let k = 0; k < K; k++) for (let n = 0; n < N; n++) q[k * N + n] = Math.max(-127, Math.min(127, rint(w[k * N + n] / scale[n])));
  return { q, scale };
}

function quantizeMatMulsInt8(model: IModelProto): void {
  const g = model.graph!;
  const inits = new Map((g.initializer ?? []).map((t) => [t.name!, t]));
  const uses = new Map<string, number>();
  for (const n of g.node ?? []) for (const i of n.input ?? []) uses.set(i, (uses.get(i) ?? 0) + 1);
  const quantized = new Map<string, { q: string; scale: string; zp: string }>();
  const added: ITensorProto[] = [];
  const dropped = new Set<string>();
  let count = 0;
  const nodes = (g.node ?? []).map((n): INodeProto => {
    if (n.opType !== 'MatMul' && n.opType !== 'Gemm') return n;
    if (n.domain && n.domain !== '') return n;
    const wName = n.input?.[1];
    const w = wName ? inits.get(wName) : undefined;
    if (!w || w.dataType !== FLOAT || (w.dims ?? []).length !== 2) return n;
    if (n.opType === 'Gemm') {
      // Gemm is MatMul + bias only with its defaults (alpha = beta = 1, no transposes) and a 1-D bias.
      const plain = (n.attribute ?? []).every((a) => (a.name === 'alpha' || a.name === 'beta' ? a.f === 1 : Number(a.i ?? 0) === 0));
      const bias = n.input?.[2] ? inits.get(n.input[2]) : undefined;
      if (!plain || (n.input?.[2] && (!bias || (bias.dims ?? []).length !== 1))) return n;
    }
    const name = wName!;
    let qn = quantized.get(name);
    if (!qn) {
      const [K, N] = (w.dims ?? []).map(Number);
      const { q, scale } = quantizeColumnsInt8(floatData(w), K, N);
      qn = { q: `${name}__int8`, scale: `${name}__scale`, zp: `${name}__zero_point` };
      added.push(
        { name: qn.q, dims: [K, N], dataType: INT8, rawData: new Uint8Array(q.buffer) },
        {
          name: qn.scale,
          dims: [N],
          dataType: FLOAT,
          rawData: rawOf(N, (dv) => scale.forEach((s, i) => dv.setFloat32(i * 4, s, true)), 4),
        },
        { name: qn.zp, dims: [N], dataType: INT8, rawData: new Uint8Array(N) },
      );
      quantized.set(name, qn);
    }
    uses.set(name, (uses.get(name) ?? 0) - 1);
    if (uses.get(name) === 0) dropped.add(name);
    count++;
    const input = [n.input![0], qn.q, qn.scale, qn.zp];
    if (n.opType === 'Gemm' && n.input?.[2]) input.push(n.input[2]);
    return { opType: 'DynamicQuantizeMatMul', domain: MS, input, output: n.output, name: `${n.name ?? 'mm'}_int8` };
  });
  if (count === 0) throw new Error('compute.rolloutPrecision=int8: the graph has no MatMul/Gemm with a 2-D float weight to quantise');
  g.node = nodes;
  g.initializer = [...(g.initializer ?? []).filter((t) => !dropped.has(t.name!)), ...added];
  if (!(model.opsetImport ?? []).some((o) => o.domain === MS))
    model.opsetImport = [...(model.opsetImport ?? []), { domain: MS, version: 1 }];
}
