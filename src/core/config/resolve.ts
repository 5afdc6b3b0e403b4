/**
 * Resolution: base defaults → the environment's defaults → the preset's overrides (and its env-specific
 * ones) → the user's dotted overrides; then model-size filling, env-settings validation by the env catalog,
 * full validation, and a deep freeze. Nothing is silently dropped: every rejected input is an issue.
 */
import { ENV_CATALOG, resolveSettings } from '../envs/index';
import { FIELD_TABLE, FIELDS_BY_PATH, type FieldValue } from './fields';
import { coerceField, coerceSetting, ENV_SETTINGS_PREFIX, RESERVED_KEYS, reservedKeyMessage, unknownFieldMessage } from './parse';
import { DEFAULT_PRESET, PRESET_NAMES, presetDef } from './presets/index';
import { pressureLevel } from './pressure';
import type { ConfigIssue, EnvName, OverrideValue, RunConfig } from './types';
import { setPath, validateConfig } from './validate';

const MODEL_DIMS = ['dModel', 'nLayers', 'nHeads', 'dFF', 'maxSeqLen'] as const;

/**
 * The named policy sizes' dims. They mirror MODEL_SIZES in src/core/agent/model.ts (a test keeps the two
 * equal); kept here so resolving a config does not load tfjs.
 */
export const MODEL_SIZE_DIMS: Readonly<Record<'nano' | 'small' | 'base', Readonly<Record<(typeof MODEL_DIMS)[number], number>>>> = {
  nano: { dModel: 64, nLayers: 2, nHeads: 4, dFF: 256, maxSeqLen: 384 },
  small: { dModel: 192, nLayers: 6, nHeads: 6, dFF: 768, maxSeqLen: 768 },
  base: { dModel: 384, nLayers: 6, nHeads: 6, dFF: 1536, maxSeqLen: 768 },
};

/** Base config from the field table (plain GRPO scaled to a laptop), before any preset. */
export function baseConfig(): RunConfig {
  const c: Record<string, unknown> = { preset: 'grpo', env: { settings: {} } };
  for (const f of FIELD_TABLE) setPath(c, f.path, f.default);
  return c as unknown as RunConfig;
}

export function deepFreeze<T>(x: T): T {
  if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

function envNames(): string[] {
  return ENV_CATALOG.map((e) => e.name);
}

/**
 * Resolve (preset, env, overrides) into a complete, validated, deep-frozen RunConfig, or null plus the
 * issues (field, value, message with the fix). `overrides` are dotted paths (`optim.lr`,
 * `env.settings.boxes`); string values are parsed by the field's type, as `--set` does; a null value
 * leaves the field at the preset's value.
 */
export function resolveConfig(
  preset: string,
  env: string,
  overrides: Readonly<Record<string, OverrideValue>> = {},
): { config: RunConfig | null; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const def = presetDef(preset);
  if (!def)
    issues.push({
      field: 'preset',
      value: preset,
      message: `unknown preset "${preset}"; known presets: ${PRESET_NAMES.join(', ')} (default ${DEFAULT_PRESET})`,
    });
  const envEntry = ENV_CATALOG.find((e) => e.name === env);
  if (!envEntry) {
    const planned = FIELDS_BY_PATH.get('env.name')!.choices!.includes(env) ? ' is not available in this build' : '';
    issues.push({
      field: 'env.name',
      value: env,
      message: `environment "${env}"${planned || ' is unknown'}; available environments: ${envNames().join(', ')}`,
    });
  }
  if (!def || !envEntry) return { config: null, issues };

  const c = baseConfig() as unknown as Record<string, unknown>;
  setPath(c, 'preset', def.name);
  setPath(c, 'env.name', envEntry.name);
  setPath(c, 'env.maxSteps', envEntry.horizon);
  setPath(c, 'env.historyWindow', envEntry.historyWindow);
  const apply = (o: Readonly<Record<string, FieldValue>>) => {
    for (const [k, v] of Object.entries(o)) setPath(c, k, v);
  };
  apply(def.overrides);
  apply(def.envOverrides?.[envEntry.name as EnvName] ?? {});
  // A pressure level's knobs come after the preset and before the user's own overrides (which may still set one).
  const pressure = overrides['training.pressure'];
  if (pressure !== undefined && pressure !== null) {
    const r = coerceField(FIELDS_BY_PATH.get('training.pressure')!, pressure);
    if (!('error' in r)) apply(pressureLevel(r.value as number).overrides);
  }

  const userDims = new Set<string>();
  const settings: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(overrides)) {
    // null means "no override here" (the editor clears a field this way): the preset's value stands.
    if (raw === null) continue;
    if (key === 'preset' || key === 'env.name') {
      issues.push({
        field: key,
        value: raw,
        message: `${key} is chosen by the ${key === 'preset' ? 'preset' : 'environment'} argument, not by an override; pass it there`,
      });
      continue;
    }
    if (key.startsWith(ENV_SETTINGS_PREFIX) && key.length > ENV_SETTINGS_PREFIX.length) {
      const name = key.slice(ENV_SETTINGS_PREFIX.length);
      if (RESERVED_KEYS.has(name)) {
        issues.push({ field: key, value: raw, message: reservedKeyMessage(key) });
        continue;
      }
      settings[name] = coerceSetting(raw);
      continue;
    }
    const f = FIELDS_BY_PATH.get(key);
    if (!f) {
      issues.push({ field: key, value: raw, message: unknownFieldMessage(key) });
      continue;
    }
    const r = coerceField(f, raw);
    if ('error' in r) {
      issues.push({ field: key, value: raw, message: r.error });
      continue;
    }
    setPath(c, key, r.value);
    if (key.startsWith('model.') && key !== 'model.size') userDims.add(key);
  }

  // A named size fixes the network's dims so the label always matches it; custom keeps what was given. The
  // context (maxSeqLen) is not part of the label (as "a 4B model with an 8k context"): it is the user's if set,
  // else the size's own raised to what the env's prompts need (ENV_CATALOG contextTokens), so a shop prompt is
  // not cut on nano.
  const size = (c.model as Record<string, unknown>).size as string;
  if (size !== 'custom') {
    const shape = MODEL_SIZE_DIMS[size as keyof typeof MODEL_SIZE_DIMS];
    for (const dim of MODEL_DIMS) {
      const path = `model.${dim}`;
      if (dim === 'maxSeqLen') {
        if (!userDims.has(path)) setPath(c, path, Math.max(shape.maxSeqLen, envEntry.contextTokens));
        continue;
      }
      if (userDims.has(path) && (c.model as Record<string, unknown>)[dim] !== shape[dim]) {
        issues.push({
          field: path,
          value: (c.model as Record<string, unknown>)[dim],
          message: `${path} only applies with model.size=custom (size "${size}" fixes it at ${shape[dim]}); add --set model.size=custom or drop this override`,
        });
      }
      setPath(c, path, shape[dim]);
    }
  }

  // The horizon lives in env.maxSteps; an env that also has a maxSteps setting gets the same value (set
  // env.settings.maxSteps alone and it becomes the horizon).
  if ('maxSteps' in envEntry.settings) {
    if ('maxSteps' in settings && !('env.maxSteps' in overrides)) setPath(c, 'env.maxSteps', settings.maxSteps);
    else settings.maxSteps = (c.env as Record<string, unknown>).maxSteps;
  }
  try {
    setPath(c, 'env.settings', resolveSettings(envEntry.name, envEntry.settings, settings));
  } catch (e) {
    issues.push({ field: 'env.settings', value: settings, message: (e as Error).message });
  }

  // Report everything at once: the rejected inputs above plus whatever the accepted ones break.
  const seen = new Set(issues.map((i) => i.field));
  for (const p of validateConfig(c)) if (!seen.has(p.field)) issues.push(p);
  if (issues.length > 0) return { config: null, issues };
  return { config: deepFreeze(c as unknown as RunConfig), issues: [] };
}
