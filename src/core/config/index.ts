/**
 * The one typed run config (DEVELOPERS.md): RunConfig (types.ts), its documented field table (fields.ts →
 * CONFIG_FIELDS), the paper's presets (presets/), `--set` parsing (parse.ts), validation with fix-it messages
 * (validate.ts) and resolution (resolve.ts).
 *
 *   const { config, issues } = resolveConfig('sampo', 'sokoban', { 'optim.lr': '3e-5' });
 *   if (!config) for (const i of issues) console.error(`${i.field}: ${i.message}`);
 */
import { resolveConfig } from './resolve';
import { DEFAULT_PRESET } from './presets/index';
import type { RunConfig } from './types';

export type { BackendName, ConfigIssue, EnvName, ModelSizeName, OverrideValue, RunConfig } from './types';
export { CONFIG_FIELDS, FIELD_TABLE, FIELDS_BY_PATH } from './fields';
export type { FieldDef, FieldType, FieldValue } from './fields';
export { closeMatches, coerceField, parseSetArgs } from './parse';
export { DEFAULT_PRESET, PRESETS, PRESET_NAMES, listPresets, presetDef } from './presets/index';
export type { PresetDef } from './presets/index';
export { MODEL_SIZE_DIMS, baseConfig, deepFreeze, resolveConfig } from './resolve';
export { LORA_TARGET_NAMES, crossFieldIssues, getPath, setPath, validateConfig } from './validate';
export { correctionIssues, rolloutCorrectionOf } from './correction';
export { PRESSURE_LEVELS, pressureLevel } from './pressure';
export type { PressureLevel } from './pressure';
export type { RunCorrection } from './correction';

/** The default run: the recommended preset (SAMPO) on the default environment, resolved and frozen. */
export const DEFAULT_ENV = 'sokoban';
export const DEFAULT_CONFIG: RunConfig = (() => {
  const { config, issues } = resolveConfig(DEFAULT_PRESET, DEFAULT_ENV, {});
  if (!config) throw new Error(`DEFAULT_CONFIG does not validate: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`);
  return config;
})();
