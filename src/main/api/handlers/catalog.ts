import { METRIC_CATALOG } from '../../../shared/metrics';
import { err, ok } from '../../../shared/result';
import type { MainServices } from '../../services';
import type { AreaMethods, Handlers } from '../types';

/** Static catalogs for the renderer (presets, environments, metrics, config fields) and config resolution. */
export function createCatalogHandlers(_services: MainServices): Handlers<AreaMethods<'catalog'> | 'config.resolve'> {
  return {
    'catalog.metrics': () => ok(METRIC_CATALOG.map((d) => ({ ...d }))),
    'catalog.presets': () => err('UNAVAILABLE', 'catalog.presets: the preset catalog (src/core/config, issue 3) has not landed yet'),
    'catalog.configFields': () => err('UNAVAILABLE', 'catalog.configFields: the config field catalog (src/core/config, issue 3) has not landed yet'),
    'catalog.envs': () => err('UNAVAILABLE', 'catalog.envs: the environment catalog (src/core/envs, issue 4) has not landed yet'),
    'config.resolve': () => err('UNAVAILABLE', 'config.resolve: config resolution (src/core/config, issue 3) has not landed yet'),
  };
}
