/**
 * The safetensors format (Hugging Face's weight files), read pure: bytes in, tensors out. The file reading itself is
 * streamed tensor by tensor on the main side (src/main/compute/models), which calls these functions on each piece.
 *
 * Layout (the format's specification): 8 bytes little-endian u64 N, then N bytes of UTF-8 JSON
 * `{name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {string: string}}`, then the data buffer;
 * offsets are relative to the data buffer's start, little-endian, row-major, no gaps required.
 *
 * Only floating-point weights are converted (F32, F16, BF16 → float32, which is what the lab computes in); other
 * dtypes are listed by name in the error.
 */
export type SafetensorsDtype = 'F32' | 'F16' | 'BF16';
const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };
const KNOWN_OTHER = ['F64', 'F8_E4M3', 'F8_E5M2', 'I64', 'I32', 'I16', 'I8', 'U8', 'U16', 'U32', 'U64', 'BOOL'];

export interface SafetensorsEntry {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Byte offsets inside the data buffer (relative to `dataStart`). */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  /** Where the data buffer starts in the file (8 + header length). */
  dataStart: number;
  /** Tensors in file order (sorted by begin offset). */
  tensors: SafetensorsEntry[];
  metadata: Record<string, string>;
}

export class SafetensorsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

/** Largest header accepted (the reference implementation's limit is 100 MB too). */
export const MAX_HEADER_BYTES = 100_000_000;

/** The header length N from the file's first 8 bytes. */
export function safetensorsHeaderLength(first8: Uint8Array, file = 'safetensors file'): number {
  if (first8.length < 8) throw new SafetensorsError(`${file}: shorter than 8 bytes — not a safetensors file (or truncated)`);
  const dv = new DataView(first8.buffer, first8.byteOffset, 8);
  const lo = dv.getUint32(0, true);
  const hi = dv.getUint32(4, true);
  const n = hi * 2 ** 32 + lo;
  if (n < 2 || n > MAX_HEADER_BYTES)
    throw new SafetensorsError(
      `${file}: header length ${n} is not plausible (2..${MAX_HEADER_BYTES}) — not a safetensors file, or a corrupt one`,
    );
  return n;
}

/**
 * Parse and check the JSON header. `fileSize` (when known) is checked against every tensor's byte range, so a
 * truncated file is refused before any tensor is read.
 */
export function parseSafetensorsHeader(headerBytes: Uint8Array, fileSize: number | null, file = 'safetensors file'): SafetensorsHeader {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(headerBytes));
  } catch (e) {
    throw new SafetensorsError(
      `${file}: the header is not valid UTF-8 JSON (${(e as Error).message}) — the file is corrupt or not safetensors`,
    );
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new SafetensorsError(`${file}: the header is not a JSON object`);
  const dataStart = 8 + headerBytes.length;
  const tensors: SafetensorsEntry[] = [];
  let metadata: Record<string, string> = {};
  for (const [name, v] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = (v ?? {}) as Record<string, string>;
      continue;
    }
    const e = v as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (typeof e !== 'object' || e === null) throw new SafetensorsError(`${file}: tensor "${name}" has no header entry object`);
    const dtype = e.dtype;
    if (typeof dtype !== 'string' || !(dtype in BYTES)) {
      const known = KNOWN_OTHER.includes(String(dtype));
      throw new SafetensorsError(
        `${file}: tensor "${name}" has dtype ${JSON.stringify(dtype)}; ${known ? 'only F32, F16 and BF16 weights are supported (convert the checkpoint, e.g. with save_pretrained in bfloat16)' : 'not a safetensors dtype'}`,
      );
    }
    const shape = e.shape;
    if (!Array.isArray(shape) || shape.some((s) => typeof s !== 'number' || !Number.isInteger(s) || s < 0)) {
      throw new SafetensorsError(`${file}: tensor "${name}" has shape ${JSON.stringify(shape)}; expected a list of non-negative integers`);
    }
    const off = e.data_offsets;
    if (
      !Array.isArray(off) ||
      off.length !== 2 ||
      off.some((x) => typeof x !== 'number' || !Number.isInteger(x) || x < 0) ||
      off[1] < off[0]
    ) {
      throw new SafetensorsError(
        `${file}: tensor "${name}" has data_offsets ${JSON.stringify(off)}; expected [begin, end] with 0 ≤ begin ≤ end`,
      );
    }
    const numel = (shape as number[]).reduce((a, b) => a * b, 1);
    const want = numel * BYTES[dtype as SafetensorsDtype];
    if (off[1] - off[0] !== want) {
      throw new SafetensorsError(
        `${file}: tensor "${name}" spans ${off[1] - off[0]} bytes but ${dtype} [${shape.join(', ')}] needs ${want}`,
      );
    }
    tensors.push({ name, dtype: dtype as SafetensorsDtype, shape: shape as number[], begin: off[0], end: off[1] });
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < tensors.length; i++) {
    if (tensors[i].begin < tensors[i - 1].end)
      throw new SafetensorsError(`${file}: tensors "${tensors[i - 1].name}" and "${tensors[i].name}" overlap`);
  }
  if (fileSize !== null) {
    const need = dataStart + (tensors.length ? tensors[tensors.length - 1].end : 0);
    if (fileSize < need) {
      const cut = tensors.find((t) => dataStart + t.end > fileSize)!;
      throw new SafetensorsError(
        `${file} is truncated: ${fileSize} bytes, but tensor "${cut.name}" ends at byte ${dataStart + cut.end} (the header promises ${need}); copy the file again`,
      );
    }
  }
  return { dataStart, tensors, metadata };
}

let f16Table: Float32Array | null = null;

/** float16 bits → float32, for all 65,536 patterns (subnormals, ±inf and NaN included). */
function halfTable(): Float32Array {
  if (f16Table) return f16Table;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >> 10) & 0x1f;
    const frac = h & 0x3ff;
    if (exp === 0) t[h] = sign * frac * 2 ** -24;
    else if (exp === 31) t[h] = frac ? NaN : sign * Infinity;
    else t[h] = sign * (1 + frac / 1024) * 2 ** (exp - 15);
  }
  f16Table = t;
  return t;
}

/** A tensor's raw little-endian bytes → float32 (exact for all three dtypes: bf16 and f16 embed in f32). */
export function toFloat32(bytes: Uint8Array, dtype: SafetensorsDtype): Float32Array {
  const n = bytes.length / BYTES[dtype];
  if (!Number.isInteger(n)) throw new SafetensorsError(`toFloat32: ${bytes.length} bytes is not a whole number of ${dtype} values`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === 'F32') {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
    return out;
  }
  if (dtype === 'BF16') {
    // bfloat16 is the top half of a float32.
    const bits = new Uint32Array(n);
    for (let i = 0; i < n; i++) bits[i] = dv.getUint16(2 * i, true) << 16;
    return new Float32Array(bits.buffer);
  }
  const table = halfTable();
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = table[dv.getUint16(2 * i, true)];
  return out;
}

/** model.safetensors.index.json → shard file → tensor names in it. Shard names must be plain file names. */
export function parseShardIndex(json: unknown, file = 'model.safetensors.index.json'): Map<string, string[]> {
  const wm = (json as { weight_map?: unknown } | null)?.weight_map;
  if (typeof wm !== 'object' || wm === null || Array.isArray(wm))
    throw new SafetensorsError(`${file}: no "weight_map" object (tensor name → shard file)`);
  const shards = new Map<string, string[]>();
  for (const [name, shard] of Object.entries(wm as Record<string, unknown>)) {
    if (typeof shard !== 'string' || !/^[\w.-]+\.safetensors$/.test(shard) || shard.includes('..')) {
      throw new SafetensorsError(
        `${file}: tensor "${name}" maps to ${JSON.stringify(shard)}; expected a *.safetensors file name in the same folder`,
      );
    }
    const list = shards.get(shard) ?? [];
    list.push(name);
    shards.set(shard, list);
  }
  if (shards.size === 0) throw new SafetensorsError(`${file}: "weight_map" is empty`);
  return shards;
}

/** Build a safetensors file (tests and the merged-LoRA export): float32 tensors in the given order. */
export function writeSafetensors(
  tensors: ReadonlyArray<{ name: string; shape: number[]; data: Float32Array }>,
  metadata: Record<string, string> = {},
): Uint8Array {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let off = 0;
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new SafetensorsError(`writeSafetensors: "${t.name}" has ${t.data.length} values for shape [${t.shape}]`);
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [off, off + 4 * n] };
    off += 4 * n;
  }
  let json = JSON.stringify(header);
  // Pad the header with spaces so the data buffer starts 8-byte aligned (what the reference writer does).
  while ((8 + new TextEncoder().encode(json).length) % 8 !== 0) json += ' ';
  const hb = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + hb.length + off);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, hb.length, true);
  dv.setUint32(4, 0, true);
  out.set(hb, 8);
  let p = 8 + hb.length;
  for (const t of tensors) {
    for (let i = 0; i < t.data.length; i++) dv.setFloat32(p + 4 * i, t.data[i], true);
    p += 4 * t.data.length;
  }
  return out;
}
