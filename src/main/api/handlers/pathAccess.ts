/**
 * Paths a call names on the main side's disk (imports.path, follow.start, models.inspect): `~` expanded, absolute
 * only, and in browser mode only inside the folders `arlarena serve --allow-dir DIR` allowed — links resolved first,
 * so one pointing out is refused, and the same answer whether or not the path exists, so a page cannot probe the
 * disk. The desktop app's window names no path for imports.path / follow.start: those come from its native dialog
 * (namedFile.ts, electron/pathGrants.ts); the CLI and other in-process callers name paths as the user typed them.
 */
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { err, type Result } from '../../../shared/result';
import type { CallContext } from '../types';

/** `~/logs/x` → the home folder's; anything else must be absolute (the main side has no meaningful cwd). */
export function mainSidePath(p: string): string | null {
  const expanded = p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
  return isAbsolute(expanded) ? expanded : null;
}

/** The path with its links resolved; for a path that does not exist, the nearest existing folder's, plus the rest. */
export async function realPathOf(p: string): Promise<string> {
  const rest: string[] = [];
  let cur = resolve(p);
  for (;;) {
    try {
      return join(await realpath(cur), ...rest.reverse());
    } catch {
      const parent = resolve(cur, '..');
      if (parent === cur) return resolve(p);
      rest.push(basename(cur));
      cur = parent;
    }
  }
}

/** True when `p` (links resolved) is one of `roots` or inside one. */
export async function insideRoots(p: string, roots: readonly string[]): Promise<boolean> {
  const real = await realPathOf(p);
  for (const r of roots) {
    const root = await realPathOf(r);
    if (real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)) return true;
  }
  return false;
}

/**
 * Null when the call may name `p`; else the VALIDATION refusal on `path`. `what` says what the lab reads there
 * ("files", "model folders"); `hint` what the user can do instead.
 */
export async function pathRefusal(p: string, ctx: CallContext, what: string, hint: string): Promise<Result<never> | null> {
  if (ctx.transport !== 'browser') return null;
  const roots = ctx.importRoots ?? [];
  if (await insideRoots(p, roots)) return null;
  const allowed =
    roots.length > 0
      ? `only inside ${roots.map((r) => JSON.stringify(r)).join(', ')}`
      : 'only inside folders allowed with "arlarena serve --allow-dir DIR" (none is)';
  return err('VALIDATION', `in browser mode the lab reads ${what} by path ${allowed}; ${JSON.stringify(p)} is not one of them`, {
    field: 'path',
    hint,
  });
}
