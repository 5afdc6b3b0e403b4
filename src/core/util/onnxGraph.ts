/**
 * The one ONNX graph builder of the lab's exports: the policy's full-sequence graph (src/core/agent/onnxExport.ts),
 * its generation graph (src/main/compute/ortDecoder.ts) and the Hugging Face causal-LM export (src/core/llm/onnx).
 * Initializers as little-endian raw bytes, value infos with named dynamic dimensions, nodes with generated unique
 * names, and the ModelProto encoding. Pure JS (onnx-proto is protobufjs-generated code), so it sits in core below all
 * three; the sessions themselves are main-side (src/main/compute).
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
export type INodeProto = onnxProto.onnx.INodeProto;
export type ITensorProto = onnxProto.onnx.ITensorProto;
export type IValueInfoProto = onnxProto.onnx.IValueInfoProto;
export type IAttributeProto = onnxProto.onnx.IAttributeProto;

// ONNX TensorProto.DataType and AttributeProto.AttributeType codes (onnx.proto).
export const FLOAT = 1;
export const INT32 = 6;
export const INT64 = 7;
/** TensorProto.DataLocation.EXTERNAL. */
const EXTERNAL = 1;
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_INTS = 7;

export const attrInt = (name: string, i: number): IAttributeProto => ({ name, type: ATTR_INT, i });
export const attrInts = (name: string, ints: number[]): IAttributeProto => ({ name, type: ATTR_INTS, ints });
export const attrFloat = (name: string, f: number): IAttributeProto => ({ name, type: ATTR_FLOAT, f });

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class OnnxGraph {
  readonly nodes: INodeProto[] = [];
  readonly initializers: ITensorProto[] = [];
  readonly inputs: IValueInfoProto[] = [];
  readonly outputs: IValueInfoProto[] = [];
  private counter = 0;
  private readonly constants = new Map<string, string>();

  /** A fresh value name. */
  tmp(hint: string): string {
    return `${hint}_${this.counter++}`;
  }

  /** Append a node; returns its first output (named `outputs[0]` when given, else a fresh name). */
  node(opType: string, inputs: string[], hint: string, attribute: IAttributeProto[] = [], outputs?: string[], domain?: string): string {
    const outs = outputs ?? [this.tmp(hint)];
    this.nodes.push({ opType, input: inputs, output: outs, name: this.tmp(`n_${opType}`), attribute, ...(domain ? { domain } : {}) });
    return outs[0];
  }

  /**
   * A float32 initializer as raw little-endian bytes: on such hosts the buffer is copied as it is (an element loop over
   * small's 2.8M weights would cost every setWeights), elsewhere DataView swaps them.
   */
  float(name: string, dims: number[], data: Float32Array): string {
    let raw: Uint8Array;
    if (LITTLE_ENDIAN) raw = new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
    else {
      raw = new Uint8Array(data.length * 4);
      const dv = new DataView(raw.buffer);
      for (let i = 0; i < data.length; i++) dv.setFloat32(i * 4, data[i], true);
    }
    this.initializers.push({ name, dims, dataType: FLOAT, rawData: raw });
    return name;
  }

  /** An int64 initializer (shapes, split sizes, axes). */
  int64(name: string, dims: number[], values: number[]): string {
    const raw = new Uint8Array(values.length * 8);
    const dv = new DataView(raw.buffer);
    values.forEach((v, i) => dv.setBigInt64(i * 8, BigInt(v), true));
    this.initializers.push({ name, dims, dataType: INT64, rawData: raw });
    return name;
  }

  /** A shared 1-D int64 constant (one initializer per distinct value list). */
  ints(values: number[]): string {
    const key = values.join(',');
    let name = this.constants.get(`i:${key}`);
    if (!name) {
      name = this.int64(`c_i64_${this.constants.size}`, [values.length], values);
      this.constants.set(`i:${key}`, name);
    }
    return name;
  }

  /** A shared float32 scalar constant. */
  scalar(value: number): string {
    const key = `f:${Math.fround(value)}`;
    let name = this.constants.get(key);
    if (!name) {
      name = this.float(`c_f32_${this.constants.size}`, [], new Float32Array([value]));
      this.constants.set(key, name);
    }
    return name;
  }

  input(name: string, elemType: number, dims: Array<number | string>): string {
    this.inputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  output(name: string, elemType: number, dims: Array<number | string>): string {
    this.outputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  /** Serialise as a ModelProto (IR 8) importing the standard opset and, when used, onnxruntime's com.microsoft. */
  encode(graphName: string, opset: number): Uint8Array {
    return this.encodeWith(graphName, opset, this.initializers);
  }

  /**
   * The same model with every initializer of at least `minBytes` bytes moved to ONNX external data: the ModelProto
   * names the file `location` with each tensor's offset and length, and `data` holds the file's contents in order
   * (chunks, each tensor padded to 64 bytes, because a model past 2 GiB is also past what one buffer should hold). A
   * protobuf message cannot exceed 2 GiB; this is how ONNX stores larger models.
   */
  encodeExternal(graphName: string, opset: number, location: string, minBytes = 1024): { model: Uint8Array; data: Uint8Array[] } {
    const data: Uint8Array[] = [];
    let offset = 0;
    const initializers = this.initializers.map((t) => {
      const raw = t.rawData as Uint8Array | undefined;
      if (!raw || raw.length < minBytes) return t;
      const pad = (64 - (raw.length % 64)) % 64;
      data.push(raw);
      if (pad) data.push(new Uint8Array(pad));
      const entry: ITensorProto = {
        name: t.name,
        dims: t.dims,
        dataType: t.dataType,
        dataLocation: EXTERNAL,
        externalData: [
          { key: 'location', value: location },
          { key: 'offset', value: String(offset) },
          { key: 'length', value: String(raw.length) },
        ],
      };
      offset += raw.length + pad;
      return entry;
    });
    return { model: this.encodeWith(graphName, opset, initializers), data };
  }

  private encodeWith(graphName: string, opset: number, initializer: ITensorProto[]): Uint8Array {
    const domains = new Set(this.nodes.map((n) => n.domain).filter((d): d is string => !!d));
    const model = {
      irVersion: 8,
      producerName: 'arlarena-lab',
      producerVersion: '1',
      opsetImport: [{ domain: '', version: opset }, ...[...domains].map((domain) => ({ domain, version: 1 }))],
      graph: { name: graphName, node: this.nodes, initializer, input: this.inputs, output: this.outputs },
    };
    return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
  }
}

function valueInfo(name: string, elemType: number, dims: Array<number | string>): IValueInfoProto {
  return {
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } },
  };
}

/** [out, in] (PyTorch's Linear layout) → [in, out] row-major, so the graph's product is a plain MatMul. */
export function transposeRows(w: Float32Array, rows: number, cols: number, scale = 1): Float32Array {
  const t = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) t[c * rows + r] = w[base + c] * scale;
  }
  return t;
}
