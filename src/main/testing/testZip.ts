/**
 * Test support for the bundle mutation suite: a minimal ZIP writer (PKWARE APPNOTE 4.3: local file headers,
 * central directory, end record) that can write what an honest writer never would — duplicate names, a declared
 * size that lies, a 1 GiB entry of zeros compressed to about 1 MB without ever holding the 1 GiB.
 */
import { crc32, deflateRawSync, constants } from 'node:zlib';

export interface CraftEntry {
  readonly name: string;
  /** Content to deflate. */
  readonly data?: Uint8Array;
  /** Or an already-deflated stream with its true size and CRC. */
  readonly deflated?: { readonly bytes: Uint8Array; readonly size: number; readonly crc: number };
  /** Uncompressed size written in the headers (default: the true size). */
  readonly declaredSize?: number;
}

/** A raw DEFLATE stream that inflates to `mib` MiB of zeros: one full-flushed 1 MiB block repeated, then an empty final block. */
export function zeroBomb(mib: number): { bytes: Uint8Array; size: number; crc: number } {
  const mb = Buffer.alloc(1 << 20);
  // Z_FULL_FLUSH ends the block byte-aligned and resets the dictionary, so the same bytes can follow themselves.
  const block = deflateRawSync(mb, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const bytes = Buffer.alloc(block.length * mib + 2);
  for (let i = 0; i < mib; i++) block.copy(bytes, i * block.length);
  // Final fixed-Huffman block holding only end-of-block: bits 1 (BFINAL), 01 (fixed), 0000000 (EOB) → 0x03 0x00.
  bytes[bytes.length - 2] = 0x03;
  bytes[bytes.length - 1] = 0x00;
  let crc = 0;
  for (let i = 0; i < mib; i++) crc = crc32(mb, crc);
  return { bytes, size: mib * (1 << 20), crc };
}

export function craftZip(entries: readonly CraftEntry[]): Uint8Array {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const d =
      e.deflated ??
      (() => {
        const data = e.data ?? new Uint8Array();
        return { bytes: deflateRawSync(data), size: data.length, crc: crc32(data) };
      })();
    const size = e.declaredSize ?? d.size;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(d.crc >>> 0, 14);
    local.writeUInt32LE(d.bytes.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, Buffer.from(d.bytes));
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(0x0800, 8);
    cd.writeUInt16LE(8, 10);
    cd.writeUInt32LE(d.crc >>> 0, 16);
    cd.writeUInt32LE(d.bytes.length, 20);
    cd.writeUInt32LE(size, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    central.push(cd, name);
    offset += 30 + name.length + d.bytes.length;
  }
  const cdBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cdBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return new Uint8Array(Buffer.concat([...parts, cdBytes, end]));
}
