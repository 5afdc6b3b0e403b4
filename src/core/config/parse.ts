/**
 * Turning user input into typed field values: `--set key=value` strings from the CLI and the API's dotted
 * overrides (strings, numbers, booleans). Errors name the field, the value and the fix; unknown keys list
 * the closest known ones.
 */
import { FIELD_TABLE, FIELDS_BY_PATH, type FieldDef, type FieldValue } from './fields';
import type { ConfigIssue, OverrideValue } from './types';

/** Env settings are validated by the env catalog, not by the field table. */
export const ENV_SETTINGS_PREFIX = 'env.settings.';

/**
 * Names every plain object answers to (`constructor`, `toString`, `hasOwnProperty`, `valueOf`, `__proto__`, …):
 * a lookup `specs[name]` finds them on Object.prototype, so a setting with such a name would pass as known and
 * be stored. Refused wherever a user-supplied key meets an object.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

export function reservedKeyMessage(path: string): string {
  const name = path.split('.').pop() ?? path;
  return `${path}: "${name}" is a name every JavaScript object has, so it cannot be a setting or field name; use one of the documented names (arlarena envs / arlarena algo fields)`;
}

/** Smallest positive normal float32: below it a value is flushed to 0 (or loses its precision) in the trainer. */
const FLOAT32_MIN_NORMAL = 2 ** -126;

function levenshtein(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0];
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j];
      dp[j] = Math.min(dp[j] + 1, dp[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length];
}

/** Up to 3 known paths close to `key`: same last segment, or a small edit distance. */
export function closeMatches(key: string, paths: readonly string[] = FIELD_TABLE.map((f) => f.path)): string[] {
  const k = key.toLowerCase();
  const last = k.split('.').pop() ?? k;
  const scored = paths.map((p) => {
    const pl = p.toLowerCase();
    const pLast = pl.split('.').pop() ?? pl;
    let score = Math.min(levenshtein(k, pl), levenshtein(last, pLast) + 1);
    if (pLast === last || pl.endsWith(`.${k}`)) score = 0;
    else if (pLast.includes(last) || last.includes(pLast)) score = Math.min(score, 2);
    return { p, score };
  });
  const limit = Math.max(3, Math.floor(last.length / 3));
  return scored
    .filter((s) => s.score <= limit)
    .sort((a, b) => a.score - b.score || a.p.localeCompare(b.p))
    .slice(0, 3)
    .map((s) => s.p);
}

export function unknownFieldMessage(key: string): string {
  const near = closeMatches(key);
  return `unknown config field "${key}"${near.length ? `; did you mean ${near.map((n) => `"${n}"`).join(', ')}?` : ''}`;
}

function describeRange(f: FieldDef): string {
  const lo = f.min === undefined ? '' : `${f.minExclusive ? '>' : '≥'} ${f.min}`;
  const hi = f.max === undefined ? '' : `${f.maxExclusive ? '<' : '≤'} ${f.max}`;
  return [lo, hi].filter(Boolean).join(' and ');
}

/** Range check of an already-typed number against the field's bounds; null when fine. */
export function rangeError(f: FieldDef, v: number): string | null {
  const tooLow = f.min !== undefined && (f.minExclusive ? v <= f.min : v < f.min);
  const tooHigh = f.max !== undefined && (f.maxExclusive ? v >= f.max : v > f.max);
  return tooLow || tooHigh ? `${f.path} = ${v} is out of range: it must be ${describeRange(f)}` : null;
}

/** Coerce one override value to the field's type and check its range. */
export function coerceField(f: FieldDef, raw: OverrideValue | FieldValue | undefined): { value: FieldValue } | { error: string } {
  const shown = JSON.stringify(raw);
  if (raw === null || raw === undefined)
    return { error: `${f.path} = ${shown}: a value is required; drop the override to keep the default (${JSON.stringify(f.default)})` };
  switch (f.type) {
    case 'number':
    case 'integer': {
      const v = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw.trim()) : Number.NaN;
      if (!Number.isFinite(v))
        return {
          error: `${f.path} = ${shown}: expected ${f.type === 'integer' ? 'an integer' : 'a finite number'} (e.g. ${JSON.stringify(f.default)})`,
        };
      if (f.type === 'integer' && !Number.isInteger(v))
        return { error: `${f.path} = ${shown}: expected a whole number (e.g. ${JSON.stringify(f.default)})` };
      // The trainer computes in float32: optim.eps = 1e-300 is 0 there and turns 0/0 into NaN weights.
      if (f.type === 'number' && v !== 0 && (Math.abs(v) < FLOAT32_MIN_NORMAL || !Number.isFinite(Math.fround(v)))) {
        return {
          error: `${f.path} = ${shown}: ${v} is ${Math.abs(v) < FLOAT32_MIN_NORMAL ? '0 (or denormal)' : 'infinite'} in float32, the precision training runs in; use a magnitude between 1.2e-38 and 3.4e38 (default ${JSON.stringify(f.default)})`,
        };
      }
      const r = rangeError(f, v);
      return r ? { error: r } : { value: v };
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return { value: raw };
      const s = String(raw).trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(s)) return { value: true };
      if (['false', '0', 'no', 'off'].includes(s)) return { value: false };
      return { error: `${f.path} = ${shown}: expected true or false` };
    }
    case 'enum': {
      const s = String(raw).trim();
      if (!f.choices!.includes(s)) return { error: `${f.path} = ${shown}: expected one of ${f.choices!.join(', ')}` };
      return { value: s };
    }
    default:
      return typeof raw === 'string' ? { value: raw } : { error: `${f.path} = ${shown}: expected a string` };
  }
}

/** Env settings are free-form here (the env validates them): numbers and booleans are recognised. */
export function coerceSetting(raw: OverrideValue): FieldValue | null {
  if (raw === null) return null;
  if (typeof raw !== 'string') return raw;
  const s = raw.trim();
  if (s === 'true' || s === 'false') return s === 'true';
  if (s !== '' && Number.isFinite(Number(s))) return Number(s);
  return raw;
}

/**
 * Parse `--set key=value` arguments into typed dotted overrides. Unknown keys and bad values become issues
 * (field, value, message); good ones land in `overrides`.
 */
export function parseSetArgs(args: readonly string[]): { overrides: Record<string, FieldValue>; issues: ConfigIssue[] } {
  const overrides: Record<string, FieldValue> = {};
  const issues: ConfigIssue[] = [];
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) {
      issues.push({ field: arg, value: arg, message: `--set ${JSON.stringify(arg)}: expected key=value, e.g. --set optim.lr=1e-5` });
      continue;
    }
    const key = arg.slice(0, eq).trim();
    const raw = arg.slice(eq + 1);
    if (key.startsWith(ENV_SETTINGS_PREFIX) && key.length > ENV_SETTINGS_PREFIX.length) {
      if (RESERVED_KEYS.has(key.slice(ENV_SETTINGS_PREFIX.length))) {
        issues.push({ field: key, value: raw, message: reservedKeyMessage(key) });
        continue;
      }
      overrides[key] = coerceSetting(raw) as FieldValue;
      continue;
    }
    const f = FIELDS_BY_PATH.get(key);
    if (!f) {
      issues.push({ field: key, value: raw, message: unknownFieldMessage(key) });
      continue;
    }
    const c = coerceField(f, raw);
    if ('error' in c) issues.push({ field: key, value: raw, message: c.error });
    else overrides[key] = c.value;
  }
  return { overrides, issues };
}
