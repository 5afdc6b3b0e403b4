/**
 * Where the Electron binary is, without loading the `electron` package: its index.js downloads the binary as a
 * side effect when it is missing, which must never happen implicitly (and cannot succeed on offline machines).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { spawn } from 'node:child_process';

export type ElectronBinary = { readonly available: true; readonly path: string } | { readonly available: false; readonly reason: string };

function electronPackageDir(): string | null {
  try {
    return dirname(createRequire(import.meta.url).resolve('electron/package.json'));
  } catch {
    return null;
  }
}

/** Finds the Electron executable the `electron` npm package would launch; never downloads. */
export function findElectronBinary(): ElectronBinary {
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) {
    const candidates = ['electron', 'Electron.app/Contents/MacOS/Electron', 'electron.exe'].map((p) =>
      join(process.env.ELECTRON_OVERRIDE_DIST_PATH as string, p),
    );
    const found = candidates.find((p) => existsSync(p));
    return found
      ? { available: true, path: found }
      : { available: false, reason: `no Electron executable in ELECTRON_OVERRIDE_DIST_PATH (${process.env.ELECTRON_OVERRIDE_DIST_PATH})` };
  }
  const dir = electronPackageDir();
  if (!dir) return { available: false, reason: 'the electron package is not installed' };
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return { available: false, reason: 'no Electron binary, node_modules/electron/dist is empty' };
  const exe = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
  try {
    if (statSync(exe).isFile()) return { available: true, path: exe };
  } catch {
    // fall through
  }
  return { available: false, reason: `no Electron binary at ${exe}` };
}

/**
 * Asks the electron package to fetch its binary (what it does lazily on first use on a machine with internet).
 * Resolves with the binary or the reason it is still unavailable; gives up after `timeoutMs`.
 */
export function downloadElectronBinary(timeoutMs: number): Promise<ElectronBinary> {
  const dir = electronPackageDir();
  if (!dir || !existsSync(join(dir, 'install.js'))) return Promise.resolve(findElectronBinary());
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dir, 'install.js')], { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', () => {
      clearTimeout(timer);
      resolve({ available: false, reason: 'could not run the Electron downloader' });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const found = findElectronBinary();
      if (found.available) return resolve(found);
      const why = signal ? `timed out after ${Math.round(timeoutMs / 1000)} s` : `exit code ${code}`;
      const last = stderr
        .split('\n')
        .map((l) => l.trim())
        .find((l) => /error|fail/i.test(l) && !l.startsWith('at '));
      resolve({
        available: false,
        reason: `no Electron binary, and downloading it failed (${why}${last ? `: ${last.slice(0, 160)}` : ''})`,
      });
    });
  });
}
