/**
 * A small self-describing binary format for named float32 tensors (checkpoint weights and optimizer moments).
 *
 * Layout: 8-byte magic "ARLTNSR1", uint32 LE header length, UTF-8 JSON header
 * `{ tensors: [{ name, shape, offset, length }] }`, zero padding to a multiple of 4, then the float32 LE data.
 * Names are written in sorted order so the same tensors always encode to the same bytes (checkpoint hashes).
 */
export interface NamedTensor {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

export type NamedTensors = Record<string, NamedTensor>;

const MAGIC = 'ARLTNSR1';

export function encodeTensors(tensors: NamedTensors): Uint8Array {
  const names = Object.keys(tensors).sort();
  let offset = 0;
  const entries = names.map((name) => {
    const t = tensors[name];
    const expected = t.shape.reduce((a, b) => a * b, 1);
    if (expected !== t.data.length)
      throw new Error(`encodeTensors: "${name}" has shape [${t.shape.join(',')}] but ${t.data.length} values`);
    const e = { name, shape: [...t.shape], offset, length: t.data.length };
    offset += t.data.length;
    return e;
  });
  const header = new TextEncoder().encode(JSON.stringify({ tensors: entries }));
  const headStart = MAGIC.length + 4;
  const dataStart = Math.ceil((headStart + header.length) / 4) * 4;
  const out = new Uint8Array(dataStart + offset * 4);
  for (let i = 0; i < MAGIC.length; i++) out[i] = MAGIC.charCodeAt(i);
  new DataView(out.buffer).setUint32(MAGIC.length, header.length, true);
  out.set(header, headStart);
  const view = new DataView(out.buffer, dataStart);
  for (const e of entries) {
    const src = tensors[e.name].data;
    for (let i = 0; i < src.length; i++) view.setFloat32((e.offset + i) * 4, src[i], true);
  }
  return out;
}

export function decodeTensors(bytes: Uint8Array): NamedTensors {
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC.charCodeAt(i)) throw new Error('decodeTensors: not an ARLArena tensor file (bad magic)');
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headLen = dv.getUint32(MAGIC.length, true);
  const headStart = MAGIC.length + 4;
  if (headStart + headLen > bytes.length) throw new Error('decodeTensors: truncated header');
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(headStart, headStart + headLen))) as {
    tensors: Array<{ name: string; shape: number[]; offset: number; length: number }>;
  };
  const dataStart = Math.ceil((headStart + headLen) / 4) * 4;
  const out: NamedTensors = {};
  for (const e of header.tensors) {
    const end = dataStart + (e.offset + e.length) * 4;
    if (end > bytes.length) throw new Error(`decodeTensors: truncated data for "${e.name}"`);
    const data = new Float32Array(e.length);
    for (let i = 0; i < e.length; i++) data[i] = dv.getFloat32(dataStart + (e.offset + i) * 4, true);
    out[e.name] = { shape: e.shape, data };
  }
  return out;
}

export function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

export function decodeJson<T>(bytes: Uint8Array): T {
  return JSON.parse(new TextDecoder().decode(bytes)) as T;
}
