import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// `arlarena start` with a stand-in Electron (ELECTRON_OVERRIDE_DIST_PATH): the launcher's decisions are tested
// without a real binary. The real window is tested by e2e/electron.e2e.ts where a binary exists.
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'arlarena-start-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeElectron(name: string, script: string): string {
  const dist = join(dir, name);
  spawnSync('mkdir', ['-p', dist]);
  const exe = join(dist, 'electron');
  writeFileSync(exe, `#!/bin/sh\n${script}\n`);
  chmodSync(exe, 0o755);
  return dist;
}

const env = (dist: string) => ({ ...process.env, ELECTRON_OVERRIDE_DIST_PATH: dist, DISPLAY: ':99', ARLARENA_DATA_DIR: join(dir, 'data') });

describe.skipIf(process.platform === 'win32')('arlarena start', () => {
  it('runs Electron on the project with the data dir, and exits with its code', () => {
    const out = join(dir, 'args.txt');
    const dist = fakeElectron('ok', `echo "$1|$ARLARENA_DATA_DIR|\${ELECTRON_RUN_AS_NODE-unset}" > ${out}; exit 0`);
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), 'start', '--no-build'], {
      cwd: ROOT,
      env: { ...env(dist), ELECTRON_RUN_AS_NODE: '1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    expect(readFileSync(out, 'utf8').trim()).toBe(`${ROOT.replace(/\/$/, '')}|${join(dir, 'data')}|unset`);
  });

  it('when Electron dies at start, says why in one line and serves the browser mode URL instead', async () => {
    const dist = fakeElectron('broken', 'echo "Error: cannot open display :99" >&2; exit 1');
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), 'start', '--no-build'], {
      cwd: ROOT,
      env: env(dist),
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!/open: +http:\/\/127\.0\.0\.1:\d+\/#token=/.test(stdout) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    process.kill(child.pid!, 'SIGTERM');
    expect(await exited).toBe(0);
    const notice = stderr.split('\n').filter((l) => l.includes('Electron is unavailable'));
    expect(notice).toEqual([
      'arlarena start: Electron is unavailable: Electron exited at start with code 1: Error: cannot open display :99. Starting browser mode instead.',
    ]);
    expect(stdout).toMatch(/open: +http:\/\/127\.0\.0\.1:\d+\/#token=[A-Za-z0-9_-]+/);
  });
});
