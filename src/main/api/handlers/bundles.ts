/** bundles.* — reproducibility bundles (src/main/bundles). */
import { err, ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { exportRun } from '../../bundles/exportBundle';
import { importBundle } from '../../bundles/importBundle';
import { BundleError } from '../../bundles/manifest';
import type { AreaMethods, Handlers } from '../types';

/** Largest bundle accepted through the API (base64 in a JSON body). */
const MAX_IMPORT_BYTES = 512 * 1024 * 1024;

export function createBundlesHandlers(services: LabServices): Handlers<AreaMethods<'bundles'>> {
  const lab = () => services.lab();
  return {
    'bundles.export': async ({ runId, includeCheckpoint }, ctx) => {
      const { store } = await lab();
      if (!(await store.getRun(runId))) return err('NOT_FOUND', `no run with id "${runId}"`, { field: 'runId' });
      const r = await exportRun(store, runId, { includeCheckpoint });
      return ok({
        fileName: r.fileName,
        path: r.path,
        bytes: r.bytes,
        sha256: r.sha256,
        downloadUrl: ctx.publishDownload ? ctx.publishDownload(r.path, r.fileName) : null,
      });
    },
    'bundles.import': async ({ fileName, dataBase64 }) => {
      const data = new Uint8Array(Buffer.from(dataBase64, 'base64'));
      if (data.length === 0) return err('VALIDATION', `${fileName}: the file is empty or not base64`, { field: 'dataBase64' });
      if (data.length > MAX_IMPORT_BYTES)
        return err('VALIDATION', `${fileName}: ${data.length} bytes is over the ${MAX_IMPORT_BYTES} byte limit`, {
          field: 'dataBase64',
          hint: 'use `arlarena import FILE` for very large bundles',
        });
      const { store } = await lab();
      try {
        const r = await importBundle(store, data);
        services.bus.emit('runs.changed', { runId: r.runId });
        return ok({ runId: r.runId, name: r.name });
      } catch (e) {
        if (e instanceof BundleError)
          return err('BUNDLE_INVALID', `${fileName}: ${e.message}`, {
            hint: 'export the run again from its source, or check the file was copied completely',
          });
        throw e;
      }
    },
  };
}
