/**
 * "Build if needed" for `arlarena start`, `arlarena serve` and the e2e runner: runs `electron-vite build` when
 * out/ is missing or older than any source that goes into it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../platform/appInfo';

/** Files whose presence means a complete build. */
const BUILD_OUTPUTS = ['out/main/index.js', 'out/main/trainingWorker.js', 'out/preload/index.cjs', 'out/renderer/index.html'];
const SOURCES = [
  'src/main',
  'src/preload',
  'src/renderer',
  'src/shared',
  'src/core',
  'resources',
  'electron.vite.config.ts',
  'package.json',
];

function newestMtime(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    newest = Math.max(newest, newestMtime(join(path, entry)));
  }
  return newest;
}

/** Why a build is needed, or null when out/ is complete and newer than every source. */
function buildStaleness(root = projectRoot()): string | null {
  let oldestOutput = Infinity;
  for (const rel of BUILD_OUTPUTS) {
    const p = join(root, rel);
    if (!existsSync(p)) return `${rel} is missing`;
    oldestOutput = Math.min(oldestOutput, statSync(p).mtimeMs);
  }
  for (const rel of SOURCES) {
    if (newestMtime(join(root, rel)) > oldestOutput) return `${rel} changed since the last build`;
  }
  return null;
}

/**
 * Builds when needed. Progress goes to `log`; the build's own output only appears when it fails.
 * Returns null on success, else a one-line reason.
 */
export function ensureBuilt(log: (line: string) => void, root = projectRoot()): string | null {
  const why = buildStaleness(root);
  if (why === null) return null;
  log(`building the app (${why})…`);
  const started = Date.now();
  const bin = join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js');
  const result = spawnSync(process.execPath, [bin, 'build'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n');
    return `electron-vite build failed (exit ${result.status ?? result.signal}):\n${output}`;
  }
  log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return null;
}
