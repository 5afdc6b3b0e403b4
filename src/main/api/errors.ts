import type { ApiError, ErrorCode } from '../../shared/result';

/**
 * An expected failure a handler may throw instead of returning `err(...)` (handy deep inside a service).
 * The router turns it into a typed error Result; anything else thrown becomes INTERNAL.
 */
export class ApiFailure extends Error {
  readonly code: ErrorCode;
  readonly field?: string;
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, extra: { field?: string; hint?: string } = {}) {
    super(message);
    this.name = 'ApiFailure';
    this.code = code;
    this.field = extra.field;
    this.hint = extra.hint;
  }

  toApiError(): ApiError {
    return {
      code: this.code,
      message: this.message,
      ...(this.field ? { field: this.field } : {}),
      ...(this.hint ? { hint: this.hint } : {}),
    };
  }
}
