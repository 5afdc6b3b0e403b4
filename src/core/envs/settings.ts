/**
 * Env settings: each env declares its knobs once (type, default, bounds, doc); `resolveSettings` fills in
 * defaults and rejects bad input with a message naming the field, the value and the fix.
 */

export type SettingValue = number | boolean | string;

export interface SettingSpec {
  readonly type: 'integer' | 'number' | 'boolean' | 'enum';
  readonly default: SettingValue;
  readonly doc: string;
  readonly min?: number;
  readonly max?: number;
  readonly choices?: readonly string[];
}

export class EnvSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvSettingsError';
  }
}

export function resolveSettings(
  env: string,
  specs: Readonly<Record<string, SettingSpec>>,
  input: Readonly<Record<string, unknown>> | undefined,
): Record<string, SettingValue> {
  const out: Record<string, SettingValue> = {};
  for (const [k, spec] of Object.entries(specs)) out[k] = spec.default;
  if (input === undefined || input === null) return out;
  if (typeof input !== 'object') throw new EnvSettingsError(`${env}: settings must be an object, got ${typeof input}`);
  for (const [k, v] of Object.entries(input)) {
    const spec = Object.hasOwn(specs, k) ? specs[k] : undefined; // own keys only: "constructor" is not a setting
    if (!spec) {
      throw new EnvSettingsError(`${env}: unknown setting "${k}"; valid settings: ${Object.keys(specs).join(', ')}`);
    }
    const where = `${env}.settings.${k}`;
    if (spec.type === 'boolean') {
      if (typeof v !== 'boolean') throw new EnvSettingsError(`${where} = ${JSON.stringify(v)}: expected true or false`);
      out[k] = v;
    } else if (spec.type === 'enum') {
      if (typeof v !== 'string' || !spec.choices?.includes(v)) {
        throw new EnvSettingsError(`${where} = ${JSON.stringify(v)}: expected one of ${spec.choices?.join(', ')}`);
      }
      out[k] = v;
    } else {
      if (typeof v !== 'number' || !Number.isFinite(v) || (spec.type === 'integer' && !Number.isInteger(v))) {
        throw new EnvSettingsError(`${where} = ${JSON.stringify(v)}: expected ${spec.type === 'integer' ? 'an integer' : 'a number'}`);
      }
      if ((spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max)) {
        throw new EnvSettingsError(`${where} = ${v}: must be between ${spec.min ?? '-∞'} and ${spec.max ?? '∞'}`);
      }
      out[k] = v;
    }
  }
  return out;
}
