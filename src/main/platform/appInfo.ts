import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Project root: works from the TypeScript sources (tsx) and from the electron-vite bundle in out/main. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (pkg.name === 'arlarena-lab') return dir;
    } catch {
      // not here; go up
    }
    dir = dirname(dir);
  }
  throw new Error('arlarena: cannot find the project root (package.json named arlarena-lab)');
}

let cachedVersion: string | undefined;
export function appVersion(): string {
  cachedVersion ??= (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return cachedVersion;
}

let cachedCommit: string | undefined;
/** The git commit of the checkout (with `-dirty` when modified), or `unknown` outside a git checkout. */
export function appCommit(): string {
  if (cachedCommit !== undefined) return cachedCommit;
  try {
    const root = projectRoot();
    const sha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    cachedCommit = dirty ? `${sha}-dirty` : sha;
  } catch {
    cachedCommit = 'unknown';
  }
  return cachedCommit;
}
