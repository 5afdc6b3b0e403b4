import { CONFIG_FIELDS, listPresets, resolveConfig } from '../../../core/config/index';
import { listEnvs } from '../../../core/envs/index';
import { FORMAT_DESCRIPTIONS } from '../../../core/formats/index';
import { METRIC_CATALOG } from '../../../shared/metrics';
import { ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import type { AreaMethods, Handlers } from '../types';

/** Static catalogs for the renderer (presets, environments, metrics, config fields) and config resolution. */
export function createCatalogHandlers(_services: LabServices): Handlers<AreaMethods<'catalog'> | 'config.resolve'> {
  return {
    'catalog.metrics': () => ok(METRIC_CATALOG.map((d) => ({ ...d }))),
    'catalog.presets': () => ok(listPresets()),
    'catalog.configFields': () => ok(CONFIG_FIELDS.map((f) => ({ ...f }))),
    'catalog.envs': () => ok(listEnvs()),
    // The log formats the importer detects, and bundles (which imports.* also takes).
    'catalog.importFormats': () =>
      ok([
        ...Object.entries(FORMAT_DESCRIPTIONS).map(([name, description]) => ({ name, description })),
        { name: 'bundle', description: 'ARLArena reproducibility bundle (zip)' },
      ]),
    // Issues (unknown preset, bad override, failed cross-field check) are an answer, not an error: the
    // "Customise" editor shows them next to their fields.
    'config.resolve': ({ preset, env, overrides }) => {
      const { config, issues } = resolveConfig(preset, env, overrides ?? {});
      return ok({ config: config ? (structuredClone(config) as unknown as Record<string, unknown>) : null, issues });
    },
  };
}
