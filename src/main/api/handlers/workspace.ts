/**
 * workspace.* — the project's workspace kept in its data directory (src/shared/workspace.ts), so the desktop app
 * and the browsers on `arlarena serve` over the same data directory open the runs table and Compare as they were
 * left. One WorkspaceFile per handler set: its changes are applied in order.
 */
import { ok } from '../../../shared/result';
import type { LabServices } from '../../app/lab';
import { WorkspaceFile } from '../../store/workspaceFile';
import type { AreaMethods, Handlers } from '../types';

export function createWorkspaceHandlers(services: LabServices): Handlers<AreaMethods<'workspace'>> {
  const file = new WorkspaceFile(services.dataDir);
  return {
    'workspace.get': async () => ok(await file.read()),
    'workspace.set': async (patch) => ok(await file.update(patch)),
  };
}
