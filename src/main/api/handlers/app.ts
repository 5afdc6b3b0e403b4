import { ok } from '../../../shared/result';
import { appCommit, appVersion } from '../../platform/appInfo';
import type { LabServices } from '../../app/lab';
import type { Handlers } from '../types';

export function createAppHandlers(services: LabServices): Handlers<'app.info'> {
  return {
    async 'app.info'(_input, ctx) {
      return ok({
        name: 'ARLArena Lab',
        version: appVersion(),
        commit: appCommit(),
        compute: await services.computeInfo(),
        dataDir: services.dataDir,
        transport: ctx.transport,
        platform: `${process.platform}-${process.arch}`,
        electronAvailable: services.electronAvailable(),
      });
    },
  };
}
