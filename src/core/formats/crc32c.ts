/**
 * CRC32C (Castagnoli) as TFRecord framing uses it: TensorFlow's record writer stores a *masked* checksum of
 * the 8-byte length and of the payload, so a record that itself holds a CRC does not checksum to a fixed value.
 * The mask is TensorFlow's `crc32c::Mask` (tensorflow/core/lib/hash/crc32c.h, mirrored by tensorboard's
 * `tensorboard/compat/tensorflow_stub/pywrap_tensorflow.py`): rotate right by 15 bits, then add 0xa282ead8.
 *
 * The checksum itself comes from SheetJS's crc-32 package (pure JS, slicing-by-16 tables, no native add-on).
 */
import CRC32C from 'crc-32/crc32c.js';

const MASK_DELTA = 0xa282ead8;

/** The plain CRC32C of `bytes` as an unsigned 32-bit integer (`crc32c("123456789") === 0xe3069283`). */
export function crc32c(bytes: Uint8Array): number {
  return CRC32C.buf(bytes) >>> 0;
}

/** Masks an unsigned CRC32C the way TFRecord stores it. */
export function maskCrc32c(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

/** The masked CRC32C of `bytes` (unsigned 32-bit), as found after a TFRecord's length and after its data. */
export function maskedCrc32c(bytes: Uint8Array): number {
  return maskCrc32c(crc32c(bytes));
}
