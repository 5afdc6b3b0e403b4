/**
 * How a call names a file on the main side (imports.path, follow.start), and the desktop app's dialog
 * (imports.pick). In the desktop app (`ctx.pathGrants`, electron/pathGrants.ts) a file is named only by the grant
 * its native dialog answered: a path sent by the window is refused, so a page in the window cannot make the lab
 * read a file the user did not pick. Elsewhere (browser mode, where `serve --allow-dir` bounds the paths; the
 * in-process callers) a file is named by path, checked by the caller's `byPath`.
 */
import { err, ok, type Result } from '../../../shared/result';
import type { AreaMethods, CallContext, Handlers } from '../types';

/** The path a call's `path` or `grant` names, or the refusal naming the field and the fix. */
export async function namedPath(
  input: { readonly path?: string; readonly grant?: string },
  ctx: CallContext,
  byPath: (path: string) => Promise<Result<string>>,
): Promise<Result<string>> {
  const { path, grant } = input;
  if (path !== undefined && grant !== undefined)
    return err('VALIDATION', 'give either path or grant, not both', { field: 'grant', hint: 'a grant already names its file' });
  if (ctx.pathGrants) {
    if (path !== undefined)
      return err('VALIDATION', 'the desktop app reads files only through its own file dialog: a path sent by the window is refused', {
        field: 'path',
        hint: 'pick the file with "From a path…" (imports.pick opens the dialog and answers a grant), then pass that grant',
      });
    if (grant === undefined)
      return err('VALIDATION', 'no file named: pass the grant imports.pick answered', {
        field: 'grant',
        hint: 'imports.pick opens the file dialog',
      });
    const granted = ctx.pathGrants.path(grant);
    if (granted === null)
      return err('VALIDATION', `grant "${grant}" was not given by this app's file dialog (grants last until the app quits)`, {
        field: 'grant',
        hint: 'pick the file again (imports.pick)',
      });
    return ok(granted);
  }
  if (grant !== undefined)
    return err('VALIDATION', "a grant names a file picked in the desktop app's dialog; here a file is named by path", {
      field: 'grant',
      hint: 'upload the file, or give a path inside a folder "arlarena serve --allow-dir DIR" allowed',
    });
  if (path === undefined) return err('VALIDATION', 'no file named: give path', { field: 'path' });
  return byPath(path);
}

/** imports.pick: opens the desktop app's native dialog; answers the grant and the chosen path, or null if cancelled. */
export function createPickHandlers(): Handlers<Extract<AreaMethods<'imports'>, 'imports.pick'>> {
  return {
    'imports.pick': async ({ kind, purpose }, ctx) => {
      if (!ctx.pathGrants)
        return err('UNAVAILABLE', "imports.pick opens the desktop app's file dialog, which browser mode does not have", {
          hint: 'upload the file, or give its path (imports.path) inside a folder "arlarena serve --allow-dir DIR" allowed',
        });
      return ok(await ctx.pathGrants.pick({ kind: kind ?? 'file', purpose: purpose ?? 'import' }));
    },
  };
}
