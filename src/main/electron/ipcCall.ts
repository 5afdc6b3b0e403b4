/**
 * The Electron call channel's logic, apart from Electron itself (ipc.ts registers it with ipcMain): every call is
 * checked to come from our window's main frame at our origin, and a call that names a file by path is refused —
 * in the desktop app a path comes only from the native dialog the main side opens (`imports.pick` → a grant;
 * pathGrants.ts), so the window cannot make the lab read a file the user did not pick. Browser mode keeps its own
 * rule (`serve --allow-dir`, api/handlers/imports.ts).
 */
import type { IpcMainEvent, IpcMainInvokeEvent, WebContents } from 'electron';
import { err, type Result } from '../../shared/result';
import type { Router } from '../api/router';
import type { CallContext, PathGrants } from '../api/types';

/** The calls that read a file on the main side by name: in Electron they take `grant`, never `path`. */
export const PATH_METHODS: ReadonlySet<string> = new Set(['imports.path', 'follow.start']);

export interface IpcCallOptions {
  readonly router: Router;
  /** The app window's web contents (null once closed). */
  readonly appContents: () => WebContents | null;
  /** True for a URL of our renderer (app://lab/… or the dev server's origin). */
  readonly isAppUrl: (url: string) => boolean;
  /** The native dialog's grants (electron/pathGrants.ts). */
  readonly pathGrants: PathGrants;
}

type SenderEvent = Pick<IpcMainEvent | IpcMainInvokeEvent, 'sender' | 'senderFrame'>;

/** Whether an IPC message came from our window's main frame at our origin. */
export function trustedSender(event: SenderEvent, appContents: () => WebContents | null, isAppUrl: (url: string) => boolean): boolean {
  const contents = appContents();
  if (!contents || contents.isDestroyed() || event.sender !== contents) return false;
  const frame = event.senderFrame;
  if (!frame || frame.parent !== null) return false;
  return isAppUrl(frame.url);
}

/** The refusal of a path named by the window, or null when the call names none. */
export function windowPathRefusal(method: unknown, input: unknown): Result<never> | null {
  if (typeof method !== 'string' || !PATH_METHODS.has(method)) return null;
  if (input === null || typeof input !== 'object' || !Object.prototype.hasOwnProperty.call(input, 'path')) return null;
  return err(
    'VALIDATION',
    `${method}: the desktop app reads files only through its own file dialog, so a path sent by the window is refused; nothing was read`,
    {
      field: 'path',
      hint: 'pick the file with "From a path…" (imports.pick opens the dialog and answers a grant), then pass that grant instead of a path',
    },
  );
}

/** The handler of the call channel: (event, method, input) → the router's typed Result. */
export function createIpcCallHandler(
  options: IpcCallOptions,
): (event: SenderEvent, method: unknown, input: unknown) => Promise<Result<unknown>> {
  const ctx: CallContext = { transport: 'electron', publishDownload: null, pathGrants: options.pathGrants };
  return async (event, method, input) => {
    if (!trustedSender(event, options.appContents, options.isAppUrl))
      return err('FORBIDDEN_SENDER', 'this IPC message did not come from the ARLArena Lab window');
    const refused = windowPathRefusal(method, input);
    if (refused) return refused;
    return options.router.call(method, input, ctx);
  };
}
