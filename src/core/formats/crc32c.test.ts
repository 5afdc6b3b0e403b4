import { describe, expect, it } from 'vitest';
import { crc32c, crc32cRange, maskCrc32c, maskedCrc32c, maskedCrc32cRange } from './crc32c';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('crc32c', () => {
  it('matches the Castagnoli check value and the RFC 3720 (iSCSI) vectors', () => {
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
    // RFC 3720 B.4: 32 bytes of zeros, of 0xff, and 0x00..0x1f.
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it('masks like TensorFlow (rotate right 15, add 0xa282ead8, mod 2^32)', () => {
    expect(maskCrc32c(0)).toBe(0xa282ead8);
    // 0xe3069283 rotated right by 15 is 0x2507c60d; plus the delta wraps past 2^32.
    expect(maskCrc32c(0xe3069283)).toBe((0x2507c60d + 0xa282ead8) >>> 0);
    expect(maskedCrc32c(ascii('123456789'))).toBe(maskCrc32c(0xe3069283));
  });

  it('matches the masked length CRCs found in real TensorBoard event files', () => {
    // Bytes 8..11 (little-endian) of the event files in ../shared/data/real-runs/tensorboard: the 2a file
    // starts with a 24-byte record (a3 7f 4b 22), the 2b files with a 72-byte one (fe 92 48 9d).
    const lenLE = (n: number): Uint8Array => new Uint8Array([n, 0, 0, 0, 0, 0, 0, 0]);
    expect(maskedCrc32c(lenLE(24))).toBe(0x224b7fa3);
    expect(maskedCrc32c(lenLE(72))).toBe(0x9d4892fe);
  });

  it('crc32cRange over any range of a larger array equals the package over that subarray', () => {
    expect(crc32cRange(ascii('xx123456789yy'), 2, 11)).toBe(0xe3069283);
    expect(crc32cRange(new Uint8Array(4), 2, 2)).toBe(0);
    // Deterministic pseudo-random bytes (an LCG), every length 0…80 at offsets 0…9: both the 8-byte loop and
    // the byte tail, at every alignment.
    const bytes = new Uint8Array(200);
    let x = 12345;
    for (let i = 0; i < bytes.length; i++) bytes[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24;
    for (let off = 0; off < 10; off++) {
      for (let len = 0; len <= 80; len++) {
        expect(crc32cRange(bytes, off, off + len)).toBe(crc32c(bytes.subarray(off, off + len)));
        expect(maskedCrc32cRange(bytes, off, off + len)).toBe(maskedCrc32c(bytes.subarray(off, off + len)));
      }
    }
  });
});
