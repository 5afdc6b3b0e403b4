/**
 * One desktop app per user: Electron's single-instance lock (app.requestSingleInstanceLock) is keyed on the app's
 * profile folder (userData: Chromium's caches and storage, which two instances must not share), and every launch
 * shares that folder whatever data dir it asked for (ARLARENA_DATA_DIR). So a second launch quits before it opens any
 * data dir and the first window comes to the front — which, for a launch that asked for another data dir, silently
 * showed the first one's runs as if they were the asked-for folder's, and what the user then trained or imported
 * went there. The second launch hands its data dir over with the lock (its additional data); the first says which
 * folder it has open when that differs, and the second says on stderr why it quit. Electron-free, so it is tested
 * without the binary (instance.noElectron.test.ts).
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

/** What a launch hands the running app with the lock (Electron passes it structured-cloned to 'second-instance'). */
export interface LaunchRequest {
  readonly dataDir: string;
}

export function launchRequest(dataDir: string): LaunchRequest {
  return { dataDir: resolve(dataDir) };
}

/** Printed by a launch that quits because the app is already open. */
export function alreadyOpenMessage(dataDir: string): string {
  return `ARLArena Lab is already open for this user; its window was brought to the front (one app per user: it shares one profile folder). This launch asked for the data folder ${resolve(dataDir)}: to use another folder while it is open, run arlarena serve --data-dir DIR (browser mode) beside it.`;
}

/**
 * What the running app (data dir `ownDataDir`) tells the user when another launch handed it `request`: null when that
 * launch asked for this same folder (or said nothing, as an older version's does), else which folder is open here and
 * how to use the other.
 */
export function secondLaunchNote(ownDataDir: string, request: unknown): string | null {
  const asked = (request as Partial<LaunchRequest> | null)?.dataDir;
  if (typeof asked !== 'string' || asked.length === 0) return null;
  const own = resolve(ownDataDir);
  if (sameFolder(resolve(asked), own)) return null;
  return `Another launch asked for the data folder ${resolve(asked)}, but ARLArena Lab is already open on ${own} and runs once per user. This window shows ${own}. To work on the other folder beside it, run: arlarena serve --data-dir "${resolve(asked)}"`;
}

/**
 * One folder by two names (a symlink, a bind mount's other path: ~/lab -> /data/lab) is the same data dir: the note
 * would tell the user the window shows another folder than the one they asked for when it does not.
 */
function sameFolder(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false; // one of them does not exist (yet): not the open one
  }
}
