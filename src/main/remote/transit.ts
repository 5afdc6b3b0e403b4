/**
 * Files that come back from a Ray job travel inside its log (line protocol, lineProtocol.ts): a checkpoint's files
 * as base64, each trajectory as JSON. The job reports a SHA-256 for each of them next to the data, computed on the
 * node before the bytes entered the log, and the lab checks every one before anything is written — the same rule
 * as a bundle import (every file against the hash its manifest lists, nothing loaded unverified). A log that was
 * altered or damaged on the way (a truncated or rewritten line, a flipped byte) is refused with the file named.
 *
 * A trajectory's hash is over its protocol text (encodeLine's JSON, which both sides produce identically: JSON
 * numbers, strings and key order survive a parse and re-serialise exactly, non-finite numbers by their $nf form).
 */
import { createHash } from 'node:crypto';
import type { Trajectory } from '../../shared/api';
import { encodeLine } from './lineProtocol';

export class TransitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransitError';
  }
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The checkpoint message a job sends: its files as base64 and each file's SHA-256 over the raw bytes. */
export interface CheckpointLine {
  readonly step: number;
  readonly meta: Record<string, unknown>;
  readonly files: Record<string, string>;
  readonly sha256: Record<string, string>;
}

/** The trajectory message a job sends: the trajectory and the SHA-256 of its protocol text. */
export interface TrajectoryLine {
  readonly trajectory: Trajectory;
  readonly sha256: string;
}

export function trajectoryDigest(t: Trajectory): string {
  return sha256Hex(encodeLine('trajectory', t));
}

/** The job's side: a checkpoint as it goes into the log. */
export function checkpointLine(c: {
  step: number;
  meta: Record<string, unknown>;
  files: Readonly<Record<string, Uint8Array>>;
}): CheckpointLine {
  const names = Object.keys(c.files);
  return {
    step: c.step,
    meta: c.meta,
    files: Object.fromEntries(
      names.map((n) => [n, Buffer.from(c.files[n].buffer, c.files[n].byteOffset, c.files[n].byteLength).toString('base64')]),
    ),
    sha256: Object.fromEntries(names.map((n) => [n, sha256Hex(c.files[n])])),
  };
}

/** The job's side: a trajectory as it goes into the log. */
export function trajectoryLine(t: Trajectory): TrajectoryLine {
  return { trajectory: t, sha256: trajectoryDigest(t) };
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The lab's side: the checkpoint's files decoded and each checked against the SHA-256 the job reported. Throws a
 * TransitError naming the file on a missing or malformed hash, a file without a hash or a hash without a file, or
 * a mismatch; the caller writes nothing of the checkpoint then.
 */
export function verifyCheckpointLine(body: unknown): { step: number; meta: Record<string, unknown>; files: Record<string, Uint8Array> } {
  const b = body as Partial<CheckpointLine> | null;
  if (!b || typeof b !== 'object' || typeof b.step !== 'number' || !b.files || typeof b.files !== 'object')
    throw new TransitError("a checkpoint line of the job's log has no step or files");
  const where = `the checkpoint at step ${b.step} that came back from Ray`;
  if (!b.sha256 || typeof b.sha256 !== 'object')
    throw new TransitError(
      `${where} carries no SHA-256s, so its files cannot be verified (the job ran an older lab package?); it is not written`,
    );
  const hashes = b.sha256;
  for (const n of Object.keys(hashes))
    if (!(n in b.files)) throw new TransitError(`${where}: the job reported a SHA-256 for ${n}, but the file did not arrive`);
  const files: Record<string, Uint8Array> = {};
  for (const [n, text] of Object.entries(b.files)) {
    const want = hashes[n];
    if (typeof want !== 'string' || !HEX64.test(want))
      throw new TransitError(`${where}: ${n} arrived without a valid SHA-256 from the job; it is not written`);
    if (typeof text !== 'string') throw new TransitError(`${where}: ${n} is not base64 text`);
    const bytes = new Uint8Array(Buffer.from(text, 'base64'));
    const got = sha256Hex(bytes);
    if (got !== want)
      throw new TransitError(
        `${where}: ${n} does not match the SHA-256 the job reported (got ${got.slice(0, 12)}…, the job sent ${want.slice(0, 12)}…); the log was altered or damaged on the way, so the checkpoint is not written`,
      );
    files[n] = bytes;
  }
  return { step: b.step, meta: (b.meta ?? {}) as Record<string, unknown>, files };
}

/** The lab's side: the trajectory, checked against the SHA-256 the job reported for it. */
export function verifyTrajectoryLine(body: unknown): Trajectory {
  const b = body as Partial<TrajectoryLine> | null;
  if (!b || typeof b !== 'object' || !b.trajectory || typeof b.trajectory !== 'object')
    throw new TransitError("a trajectory line of the job's log holds no trajectory (the job ran an older lab package?)");
  const t = b.trajectory;
  const where = `trajectory ${String(t.trajUid ?? '?')} (step ${String(t.step ?? '?')}) that came back from Ray`;
  if (typeof b.sha256 !== 'string' || !HEX64.test(b.sha256))
    throw new TransitError(`${where} arrived without a valid SHA-256 from the job; it is not written`);
  const got = trajectoryDigest(t);
  if (got !== b.sha256)
    throw new TransitError(
      `${where} does not match the SHA-256 the job reported (got ${got.slice(0, 12)}…, the job sent ${b.sha256.slice(0, 12)}…); the log was altered or damaged on the way, so it is not written`,
    );
  return t;
}
