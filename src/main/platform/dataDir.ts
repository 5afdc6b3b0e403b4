import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The folder name Electron's app.getPath('userData') uses for this app (productName in package.json). */
export const APP_DIR_NAME = 'ARLArena Lab';

/**
 * The per-user app-data folder, computed exactly as Electron computes `app.getPath('userData')`, so the CLI,
 * browser mode and the desktop app all see the same runs without loading Electron.
 */
export function defaultDataDir(): string {
  const home = homedir();
  switch (process.platform) {
    case 'win32':
      return join(process.env.APPDATA ?? join(home, 'AppData', 'Roaming'), APP_DIR_NAME);
    case 'darwin':
      return join(home, 'Library', 'Application Support', APP_DIR_NAME);
    default:
      return join(process.env.XDG_CONFIG_HOME ?? join(home, '.config'), APP_DIR_NAME);
  }
}

/** `--data-dir` wins, then ARLARENA_DATA_DIR, then the per-user default. */
export function resolveDataDir(flag?: string): string {
  if (flag) return resolve(flag);
  const env = process.env.ARLARENA_DATA_DIR;
  if (env) return resolve(env);
  return defaultDataDir();
}
