/**
 * Typed results across every process boundary. A thrown error never crosses IPC or HTTP: handlers return
 * `Result`, and the router turns anything thrown into `{ ok: false, error: { code: 'INTERNAL' } }`.
 */
export const ERROR_CODES = [
  /** An argument is missing or malformed; `field` names it. */
  'VALIDATION',
  /** The method name is not part of the contract. */
  'UNKNOWN_METHOD',
  /** The run, alert or file asked for does not exist. */
  'NOT_FOUND',
  /** The request conflicts with the current state (e.g. resuming a completed run). */
  'CONFLICT',
  /** Browser mode: the request did not carry this launch's token. */
  'UNAUTHORIZED',
  /** Electron: the IPC sender is not the app's own window. */
  'FORBIDDEN_SENDER',
  /** A capability is missing on this machine (Electron binary, a compute backend, …). */
  'UNAVAILABLE',
  /** A reproducibility bundle failed verification (hash, schema version, truncation). */
  'BUNDLE_INVALID',
  /** A stored file was unreadable; it was moved aside. */
  'STORAGE',
  /** Anything unexpected; the message says what happened. */
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ApiError {
  readonly code: ErrorCode;
  readonly message: string;
  /** Dotted path of the offending field for VALIDATION errors (e.g. `overrides.clip.epsLow`). */
  readonly field?: string;
  /** What the user can do about it, when we know. */
  readonly hint?: string;
}

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ApiError };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function err(code: ErrorCode, message: string, extra: { field?: string; hint?: string } = {}): Result<never> {
  return { ok: false, error: { code, message, ...extra } };
}
