/**
 * The API router: the one door every call from either transport (Electron IPC, browser-mode HTTP) goes through.
 *
 *  1. The method name must be part of the contract (src/shared/api.ts) → else UNKNOWN_METHOD.
 *  2. The argument is parsed with the method's zod schema → else VALIDATION naming the field path, the value
 *     received and what to do.
 *  3. The handler runs; an `ApiFailure` it throws becomes that typed error, anything else thrown becomes
 *     INTERNAL. Nothing thrown ever crosses the boundary.
 *  4. In development and tests the reply is checked against the output schema too (a bug → INTERNAL), so a
 *     handler cannot silently drift from the contract.
 */
import type { z } from 'zod';
import { apiMethods, isApiMethod, type ApiMethodName } from '../../shared/api';
import { err, type ApiError, type Result } from '../../shared/result';
import { ApiFailure } from './errors';
import type { CallContext, Handler, Handlers } from './types';

export interface RouterOptions {
  /** Check every reply against the contract's output schema (default: on unless NODE_ENV=production). */
  readonly validateOutput?: boolean;
  /** Called for INTERNAL errors (a thrown bug or a reply that broke the contract), for logging. */
  readonly onInternalError?: (method: string, error: unknown) => void;
}

export interface Router {
  /** Never throws and never rejects: every outcome is a Result. */
  call(method: unknown, input: unknown, ctx: CallContext): Promise<Result<unknown>>;
}

type Issue = z.core.$ZodIssue;

function fieldOf(issue: Issue): string {
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') return [...path, issue.keys[0]].join('.');
  return path.length > 0 ? path.join('.') : '(argument)';
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Keys an object schema (possibly wrapped in optional) accepts, for the "allowed: …" hint. */
function allowedKeys(schema: z.ZodType): string[] | null {
  let s: any = schema;
  for (let i = 0; i < 3 && s; i++) {
    if (s.shape && typeof s.shape === 'object') return Object.keys(s.shape);
    s = typeof s.unwrap === 'function' ? s.unwrap() : null;
  }
  return null;
}

/** Turn zod issues into one VALIDATION error: the first field is named; up to three are described. */
function validationError(method: string, schema: z.ZodType, input: unknown, issues: readonly Issue[]): ApiError {
  const described = issues.slice(0, 3).map((issue) => {
    if (issue.code === 'unrecognized_keys') return `${fieldOf(issue)}: not a field of ${method}`;
    const got =
      issue.code === 'invalid_type' ||
      issue.code === 'invalid_value' ||
      issue.code === 'too_small' ||
      issue.code === 'too_big' ||
      issue.code === 'invalid_format'
        ? ` (got ${show(valueAt(input, issue.path))})`
        : '';
    return `${fieldOf(issue)}: ${issue.message}${got}`;
  });
  const more = issues.length > 3 ? `; and ${issues.length - 3} more` : '';
  const first = issues[0];
  const keys = allowedKeys(schema);
  const hint =
    first.code === 'unrecognized_keys'
      ? `remove ${first.keys.map((k) => `"${k}"`).join(', ')}${keys ? `; ${method} accepts: ${keys.join(', ') || 'no fields'}` : ''}`
      : `fix "${fieldOf(first)}" and call ${method} again`;
  return { code: 'VALIDATION', message: `${method}: ${described.join('; ')}${more}`, field: fieldOf(first), hint };
}

/** Deepest nesting an API argument may have; the contract's deepest input is a few levels. */
const MAX_INPUT_DEPTH = 64;
/** Names every object has: as input keys they would reach Object.prototype (`__proto__`) or shadow its methods. */
const RESERVED_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Checked before any schema sees the argument, without recursion (a 200k-deep array would overflow the stack of
 * zod or JSON.stringify and answer INTERNAL): nesting deeper than MAX_INPUT_DEPTH, or a key like `__proto__` or
 * `constructor`, is a VALIDATION error naming where.
 */
function inputShapeError(method: string, input: unknown): ApiError | null {
  const stack: Array<{ v: unknown; depth: number; path: string }> = [{ v: input, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) {
      return {
        code: 'VALIDATION',
        message: `${method}: the argument is nested deeper than ${MAX_INPUT_DEPTH} levels (at ${path || '(argument)'}); no API method takes that`,
        field: path || '(argument)',
        hint: 'send a flat argument as the method documents it',
      };
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ v: v[i], depth: depth + 1, path: path ? `${path}.${i}` : String(i) });
      continue;
    }
    for (const k of Object.keys(v)) {
      const at = path ? `${path}.${k}` : k;
      if (RESERVED_KEYS.has(k)) {
        return {
          code: 'VALIDATION',
          message: `${method}: "${k}" is a name every JavaScript object has and cannot be used as a key (at ${at})`,
          field: at,
          hint: `remove "${k}"`,
        };
      }
      stack.push({ v: (v as Record<string, unknown>)[k], depth: depth + 1, path: at });
    }
  }
  return null;
}

function isResult(value: unknown): value is Result<unknown> {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { ok?: unknown; error?: unknown };
  if (v.ok === true) return 'value' in v;
  return v.ok === false && v.error !== null && typeof v.error === 'object';
}

export function createRouter(handlers: Handlers<ApiMethodName>, options: RouterOptions = {}): Router {
  const validateOutput = options.validateOutput ?? process.env.NODE_ENV !== 'production';
  const report = options.onInternalError ?? ((method, e) => console.error(`[api] ${method}:`, e));

  async function call(method: unknown, rawInput: unknown, ctx: CallContext): Promise<Result<unknown>> {
    if (typeof method !== 'string' || !isApiMethod(method)) {
      const name = typeof method === 'string' ? `"${method.slice(0, 100)}"` : `a ${method === null ? 'null' : typeof method}`;
      return err('UNKNOWN_METHOD', `${name} is not an API method`, {
        field: 'method',
        hint: 'method names are area.verb, e.g. runs.list or app.info',
      });
    }
    const spec = apiMethods[method];
    const schema = spec.input as z.ZodType;
    // A missing argument is parsed as {} when the method needs one, so the error names the missing fields.
    const shape = inputShapeError(method, rawInput);
    if (shape) return { ok: false, error: shape };
    let input = rawInput === null ? undefined : rawInput;
    if (input === undefined && !schema.safeParse(undefined).success) input = {};
    const parsed = schema.safeParse(input);
    if (!parsed.success) return { ok: false, error: validationError(method, schema, input, parsed.error.issues) };

    const handler = (handlers as Record<string, Handler<any> | undefined>)[method];
    if (!handler) return err('UNAVAILABLE', `${method} is not available in this build`);
    let reply: unknown;
    try {
      reply = await handler(parsed.data, ctx);
    } catch (e) {
      if (e instanceof ApiFailure) return { ok: false, error: e.toApiError() };
      report(method, e);
      return err('INTERNAL', `${method} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!isResult(reply)) {
      report(method, new Error('handler returned something that is not a Result'));
      return err('INTERNAL', `${method} failed: its handler returned something that is not a Result`);
    }
    if (validateOutput && reply.ok) {
      const checked = (spec.output as z.ZodType).safeParse(reply.value);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        const where = issue.path.length ? issue.path.map(String).join('.') : '(reply)';
        report(method, new Error(`reply broke the contract at ${where}: ${issue.message}`));
        return err('INTERNAL', `${method} failed: its reply broke the API contract at "${where}" (${issue.message})`);
      }
    }
    return reply;
  }

  return {
    call: (method, input, ctx) =>
      call(method, input, ctx).catch((e: unknown) => {
        report(String(method), e);
        return err('INTERNAL', `call failed: ${e instanceof Error ? e.message : String(e)}`);
      }),
  };
}
