/**
 * CRC32C (Castagnoli) as TFRecord framing uses it: TensorFlow's record writer stores a *masked* checksum of
 * the 8-byte length and of the payload, so a record that itself holds a CRC does not checksum to a fixed value.
 * The mask is TensorFlow's `crc32c::Mask` (tensorflow/core/lib/hash/crc32c.h, mirrored by tensorboard's
 * `tensorboard/compat/tensorflow_stub/pywrap_tensorflow.py`): rotate right by 15 bits, then add 0xa282ead8.
 *
 * The checksum of a whole array comes from SheetJS's crc-32 package (pure JS, slicing-by-16 tables, no native
 * add-on). The TensorBoard reader checks two CRCs per record over ranges of a larger chunk, most of them short
 * (a one-scalar Event is 36 bytes, its length field 8): `crc32cRange` does that without a subarray per call,
 * slicing-by-8 over tables built here (the reflected Castagnoli polynomial 0x82f63b78). Measured over 1M
 * records of 8 + 36 bytes it takes 0.07–0.10 CPU s where subarray + the package took 0.17–0.27 s.
 */
import CRC32C from 'crc-32/crc32c.js';

const MASK_DELTA = 0xa282ead8;

/** The plain CRC32C of `bytes` as an unsigned 32-bit integer (`crc32c("123456789") === 0xe3069283`). */
export function crc32c(bytes: Uint8Array): number {
  return CRC32C.buf(bytes) >>> 0;
}

/** Slicing-by-8 tables: T[k·256 + b] is the CRC of byte b followed by k zero bytes. */
const T = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) for (let k = 1; k < 8; k++) T[k * 256 + n] = (T[(k - 1) * 256 + n] >>> 8) ^ T[T[(k - 1) * 256 + n] & 0xff];

/** The plain CRC32C of `bytes[start, end)` (unsigned), the same value as crc32c(bytes.subarray(start, end)). */
export function crc32cRange(bytes: Uint8Array, start: number, end: number): number {
  let c = -1;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    c ^= bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24);
    c =
      T[1792 + (c & 0xff)] ^
      T[1536 + ((c >>> 8) & 0xff)] ^
      T[1280 + ((c >>> 16) & 0xff)] ^
      T[1024 + (c >>> 24)] ^
      T[768 + bytes[i + 4]] ^
      T[512 + bytes[i + 5]] ^
      T[256 + bytes[i + 6]] ^
      T[bytes[i + 7]];
  }
  for (; i < end; i++) c = (c >>> 8) ^ T[(c ^ bytes[i]) & 0xff];
  return ~c >>> 0;
}

/** The masked CRC32C of `bytes[start, end)`, as TFRecord stores it. */
export function maskedCrc32cRange(bytes: Uint8Array, start: number, end: number): number {
  return maskCrc32c(crc32cRange(bytes, start, end));
}

/** Masks an unsigned CRC32C the way TFRecord stores it. */
export function maskCrc32c(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

/** The masked CRC32C of `bytes` (unsigned 32-bit), as found after a TFRecord's length and after its data. */
export function maskedCrc32c(bytes: Uint8Array): number {
  return maskCrc32c(crc32c(bytes));
}
