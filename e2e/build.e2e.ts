/**
 * The electron-vite build that `npm start` and the desktop app run from (e2e/run.mjs builds it first). Electron
 * itself cannot run here, so this checks what can be checked without it: every main-process file parses, the
 * preload is CommonJS (a sandboxed renderer cannot load an ESM preload), and the renderer carries a CSP.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/lab';

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : /\.(c|m)?js$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('the desktop build (out/)', () => {
  it('every main-process and preload file parses', () => {
    const files = [...jsFiles(join(ROOT, 'out', 'main')), ...jsFiles(join(ROOT, 'out', 'preload'))];
    expect(files.map((f) => f.slice(ROOT.length + 1))).toEqual(
      expect.arrayContaining(['out/main/index.js', 'out/main/trainingWorker.js', 'out/preload/index.cjs']),
    );
    const broken: string[] = [];
    for (const file of files) {
      try {
        execFileSync(process.execPath, ['--check', file], { stdio: 'pipe' });
      } catch (e) {
        broken.push(
          `${file}: ${String((e as { stderr?: Buffer }).stderr ?? e)
            .split('\n')
            .slice(0, 5)
            .join(' | ')}`,
        );
      }
    }
    expect(broken).toEqual([]);
  });

  it('the preload is CommonJS and exposes only the bridge', () => {
    const preload = readFileSync(join(ROOT, 'out', 'preload', 'index.cjs'), 'utf8');
    expect(preload).toMatch(/require\(["']electron["']\)/);
    expect(preload).not.toMatch(/^\s*import\s/m);
    expect(preload.match(/exposeInMainWorld\(/g)).toHaveLength(1);
  });

  it('the renderer page declares a Content-Security-Policy without eval or remote scripts', () => {
    const html = readFileSync(join(ROOT, 'out', 'renderer', 'index.html'), 'utf8');
    const csp = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/script-src[^;]*(https?:|\*)/);
  });
});
