import { describe, expect, it } from 'vitest';
import { parseSafetensorsHeader, parseShardIndex, safetensorsHeaderLength, toFloat32, writeSafetensors } from './safetensors';

function header(file: Uint8Array): ReturnType<typeof parseSafetensorsHeader> {
  const n = safetensorsHeaderLength(file.subarray(0, 8));
  return parseSafetensorsHeader(file.subarray(8, 8 + n), file.length);
}

function rawFile(h: unknown, dataBytes: number): Uint8Array {
  const hb = new TextEncoder().encode(JSON.stringify(h));
  const out = new Uint8Array(8 + hb.length + dataBytes);
  new DataView(out.buffer).setUint32(0, hb.length, true);
  out.set(hb, 8);
  return out;
}

describe('safetensors', () => {
  it('round-trips float32 tensors through the writer and the parser (8-byte aligned data)', () => {
    const a = new Float32Array([1, -2.5, 3e-8, 65504]);
    const b = new Float32Array([0.1, 0.2]);
    const file = writeSafetensors(
      [
        { name: 'w', shape: [2, 2], data: a },
        { name: 'b', shape: [2], data: b },
      ],
      { format: 'pt' },
    );
    const h = header(file);
    expect(h.dataStart % 8).toBe(0);
    expect(h.metadata).toEqual({ format: 'pt' });
    expect(h.tensors.map((t) => [t.name, t.shape, t.begin, t.end])).toEqual([
      ['w', [2, 2], 0, 16],
      ['b', [2], 16, 24],
    ]);
    expect(toFloat32(file.subarray(h.dataStart, h.dataStart + 16), 'F32')).toEqual(a);
    expect(toFloat32(file.subarray(h.dataStart + 16, h.dataStart + 24), 'F32')).toEqual(b);
  });

  it('widens bf16 and fp16 bit patterns exactly (normals, subnormals, ±inf, NaN)', () => {
    const u16 = (xs: number[]): Uint8Array => new Uint8Array(new Uint16Array(xs).buffer);
    expect(Array.from(toFloat32(u16([0x3f80, 0xc000, 0x0000, 0x8000, 0x7f80, 0x3e20]), 'BF16'))).toEqual([1, -2, 0, -0, Infinity, 0.15625]);
    expect(Array.from(toFloat32(u16([0x3c00, 0xc000, 0x0001, 0x03ff, 0x7bff, 0xfbff, 0x7c00, 0xfc00]), 'F16'))).toEqual([
      1,
      -2,
      2 ** -24,
      1023 * 2 ** -24,
      65504,
      -65504,
      Infinity,
      -Infinity,
    ]);
    expect(Number.isNaN(toFloat32(u16([0x7e00]), 'F16')[0])).toBe(true);
  });

  it('refuses a truncated file before reading any tensor, naming the tensor that is cut', () => {
    const file = writeSafetensors([
      { name: 'a', shape: [4], data: new Float32Array(4) },
      { name: 'b', shape: [4], data: new Float32Array(4) },
    ]);
    const cut = file.subarray(0, file.length - 3);
    const n = safetensorsHeaderLength(cut.subarray(0, 8));
    expect(() => parseSafetensorsHeader(cut.subarray(8, 8 + n), cut.length, 'model.safetensors')).toThrow(
      /model.safetensors is truncated: \d+ bytes, but tensor "b" ends at byte \d+/,
    );
  });

  it('refuses bad headers with the tensor and the reason', () => {
    expect(() => safetensorsHeaderLength(new Uint8Array([1, 2, 3]))).toThrow(/shorter than 8 bytes/);
    expect(() => safetensorsHeaderLength(new Uint8Array([0, 0, 0, 0, 0, 0, 1, 0]))).toThrow(/header length \d+ is not plausible/);
    expect(() => header(rawFile({ w: { dtype: 'I64', shape: [1], data_offsets: [0, 8] } }, 8))).toThrow(
      /"w" has dtype "I64"; only F32, F16 and BF16/,
    );
    expect(() => header(rawFile({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, 8))).toThrow(
      /"w" spans 8 bytes but F32 \[3\] needs 12/,
    );
    expect(() =>
      header(rawFile({ a: { dtype: 'F16', shape: [4], data_offsets: [0, 8] }, b: { dtype: 'F16', shape: [2], data_offsets: [4, 8] } }, 8)),
    ).toThrow(/overlap/);
    const bad = rawFile({}, 0);
    bad[8] = 0x7b;
    bad[9] = 0xff;
    expect(() => parseSafetensorsHeader(bad.subarray(8), bad.length)).toThrow(/not valid UTF-8 JSON/);
  });

  it('reads a shard index and refuses paths outside the folder', () => {
    const idx = parseShardIndex({
      metadata: {},
      weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors', c: 'model-00001-of-00002.safetensors' },
    });
    expect([...idx.entries()]).toEqual([
      ['model-00001-of-00002.safetensors', ['a', 'c']],
      ['model-00002-of-00002.safetensors', ['b']],
    ]);
    expect(() => parseShardIndex({ weight_map: { a: '../x.safetensors' } })).toThrow(
      /expected a \*.safetensors file name in the same folder/,
    );
    expect(() => parseShardIndex({})).toThrow(/no "weight_map"/);
  });
});
