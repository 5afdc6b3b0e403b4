/**
 * Paths in the desktop app come from the native file dialog, never from the window. The window asks the main side
 * to open the dialog (`imports.pick`); what the user chose stays here, and the window gets back an opaque grant (a
 * random id) plus the chosen path to show. `imports.path` and `follow.start` then name the grant, not a path: a
 * page in the window (a bug, injected script) cannot make the lab read a file the user did not pick.
 *
 * A grant lasts until the app quits and may be used again (an import refused for its format is retried "as" a
 * named format on the same grant); the newest MAX_GRANTS are kept. No electron import here: the dialog is
 * injected (index.ts passes Electron's `dialog.showOpenDialog`), so the logic is tested without the binary.
 */
import { randomBytes } from 'node:crypto';
import type { PathGrants, PathPick, PickRequest } from '../api/types';

/** Opens the native dialog for one file or folder; the absolute path chosen, or null when cancelled. */
export type OpenDialog = (request: PickRequest) => Promise<string | null>;

/** How many grants are kept (oldest forgotten first): far more than a session picks, bounded all the same. */
export const MAX_GRANTS = 256;

export function createPathGrants(openDialog: OpenDialog): PathGrants {
  const grants = new Map<string, string>();
  return {
    async pick(request: PickRequest): Promise<PathPick | null> {
      const path = await openDialog(request);
      if (path === null) return null;
      const grant = randomBytes(18).toString('base64url');
      grants.set(grant, path);
      while (grants.size > MAX_GRANTS) grants.delete(grants.keys().next().value!);
      return { grant, path };
    },
    path: (grant: string) => grants.get(grant) ?? null,
  };
}
