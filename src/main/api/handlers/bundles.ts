/** bundles.* — reproducibility bundles (src/main/bundles). */
import { err, ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { exportRun } from '../../bundles/exportBundle';
import { bundleHolders, importBundle, verifyBundle } from '../../bundles/importBundle';
import { BundleError, sha256Hex } from '../../bundles/manifest';
import { duplicateMessage } from '../../imports/importLogs';
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
    'bundles.import': async ({ fileName, dataBase64, again }) => {
      const data = new Uint8Array(Buffer.from(dataBase64, 'base64'));
      if (data.length === 0) return err('VALIDATION', `${fileName}: the file is empty or not base64`, { field: 'dataBase64' });
      if (data.length > MAX_IMPORT_BYTES)
        return err('VALIDATION', `${fileName}: ${data.length} bytes is over the ${MAX_IMPORT_BYTES} byte limit`, {
          field: 'dataBase64',
          hint: 'use `arlarena import FILE` for very large bundles',
        });
      const { store } = await lab();
      try {
        const verified = verifyBundle(data);
        // A bundle already in the lab (the same file imported before, or the run it was exported from with the same
        // metrics) is refused as `arlarena import` refuses it (importLogs), naming the run; `again` imports a copy.
        if (!again) {
          const holders = await bundleHolders(store, sha256Hex(data), verified.manifest);
          if (holders.length > 0) {
            const ids = holders.map((h) => h.id);
            const exportedFrom = holders.filter((h) => h.why === 'exported-from').map((h) => h.id);
            return err('CONFLICT', duplicateMessage([fileName], ids, true, exportedFrom, 'again: true'));
          }
        }
        const r = await importBundle(store, data, verified);
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
