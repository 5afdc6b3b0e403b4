/**
 * The full handler map, one module per area. Each area module exports `create<Area>Handlers(services)`
 * returning a typed `Handlers<AreaMethods<'area'>>`; the compiler checks the map covers the whole contract.
 *
 * Plugging an area in is a one-line change in `areas` below: replace its `unavailableArea(...)` call with the
 * module's factory (e.g. `runs: createRunsHandlers,`).
 */
import type { ApiMethodName } from '../../../shared/api';
import type { LabServices } from '../../app/lab';
import type { AreaMethods, Handlers } from '../types';
import { createAppHandlers } from './app';
import { createCatalogHandlers } from './catalog';
import { createRunsHandlers } from './runs';
import { createSessionsHandlers } from './sessions';
import { createAlertsHandlers } from './alerts';
import { createBundlesHandlers } from './bundles';
import { createStudiesHandlers } from './studies';
import { createLaddersHandlers } from './ladders';
import { createRemotesHandlers } from './remotes';
import { createFollowHandlers, createImportsHandlers } from './imports';
import { createModelsHandlers } from './models';
import { createWorkspaceHandlers } from './workspace';

const areas: {
  [A in 'runs' | 'sessions' | 'alerts' | 'bundles' | 'imports' | 'follow']: (services: LabServices) => Handlers<AreaMethods<A>>;
} = {
  runs: createRunsHandlers,
  sessions: createSessionsHandlers,
  alerts: createAlertsHandlers,
  bundles: createBundlesHandlers,
  imports: createImportsHandlers,
  follow: createFollowHandlers,
};

export function createHandlers(services: LabServices): Handlers<ApiMethodName> {
  return {
    ...createAppHandlers(services),
    ...createCatalogHandlers(services),
    ...areas.runs(services),
    ...areas.sessions(services),
    ...areas.alerts(services),
    ...areas.bundles(services),
    ...areas.imports(services),
    ...areas.follow(services),
    ...createStudiesHandlers(services),
    ...createLaddersHandlers(services),
    ...createRemotesHandlers(services),
    ...createModelsHandlers(services),
    ...createWorkspaceHandlers(services),
  };
}
