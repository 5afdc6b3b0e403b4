// crc-32 (SheetJS) ships types for its CRC-32 entry only; its CRC32C entry (crc32c.js) has the same API.
declare module 'crc-32/crc32c.js' {
  /** CRC32C of bytes, continuing from `seed` (a previous result); a signed 32-bit integer. */
  export function buf(data: number[] | Uint8Array, seed?: number): number;
  export function str(data: string, seed?: number): number;
  const CRC32C: { buf: typeof buf; str: typeof str };
  export default CRC32C;
}
