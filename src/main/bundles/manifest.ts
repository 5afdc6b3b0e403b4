/**
 * The reproducibility bundle format (one .zip). `manifest.json` lists every other file with its SHA-256 and
 * size; import refuses anything that does not match it exactly. Bump BUNDLE_SCHEMA_VERSION on any change a
 * reader of the previous version would misread.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const BUNDLE_FORMAT = 'arlarena-bundle';
export const BUNDLE_SCHEMA_VERSION = 1;
export const BUNDLE_EXTENSION = '.arlarena.zip';

export const BundleManifest = z.object({
  format: z.literal(BUNDLE_FORMAT),
  schemaVersion: z.number().int(),
  createdAt: z.string(),
  app: z.object({ version: z.string(), commit: z.string() }),
  run: z.object({
    id: z.string(),
    name: z.string(),
    env: z.string(),
    preset: z.string(),
    seed: z.number().int(),
    status: z.string(),
    step: z.number().int(),
    totalSteps: z.number().int(),
  }),
  /** Path inside the bundle → hash and size. Every file except manifest.json is listed. */
  files: z.record(z.string(), z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int().min(0) })),
  checkpointStep: z.number().int().nullable(),
});
export type BundleManifest = z.infer<typeof BundleManifest>;

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A bundle that failed verification; the message says what is wrong. */
export class BundleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BundleError';
  }
}

/**
 * Bundle paths are relative, forward-slashed, without `.`/`..` segments, drive letters, control characters or Windows
 * device names (`CON`, `source/NUL`, `aux.txt`: writing one on Windows opens the device).
 */
export function checkEntryPath(p: string): string | null {
  if (p.length === 0 || p.length > 300) return 'empty or overlong path';
  if (p.startsWith('/') || p.startsWith('\\')) return 'absolute path';
  if (/^[A-Za-z]:/.test(p)) return 'drive-letter path';
  if (p.includes('\\')) return 'backslash in path';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(p)) return 'control character in path';
  const segs = p.split('/');
  if (segs.some((s) => s === '..' || s === '.' || s === '')) return 'relative segment ("..", "." or empty) in path';
  const device = segs.find((s) => WINDOWS_DEVICE.test(s));
  if (device !== undefined) return `"${device}" is a Windows device name`;
  return null;
}

/** CON, PRN, AUX, NUL, COM0–9, LPT0–9 (with ¹²³ too), with or without an extension, any case: Windows opens the device. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\..*)?$/i;
