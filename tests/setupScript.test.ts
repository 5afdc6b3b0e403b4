/**
 * scripts/setup.sh takes no options: `--help` prints what it installs and stops, anything else is refused in one
 * line — both before any step. It ignored its arguments, so `bash scripts/setup.sh --help` (a new user's first guess,
 * as setup-tensorflow.sh has one) went on to apt-get, the venvs and `npm ci`, which makes node_modules anew.
 * Run on a copy of the script in a scratch root (no tests/peers there) with npm, apt-get and sudo stubbed to leave a
 * mark, so the old behaviour fails this test without touching the checkout.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'arl-setup-args-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const mark = join(scratch, 'ran');
const stubs = join(scratch, 'bin');
mkdirSync(join(scratch, 'scripts'), { recursive: true });
copyFileSync(join(root, 'scripts/setup.sh'), join(scratch, 'scripts/setup.sh'));
mkdirSync(stubs);
for (const tool of ['npm', 'apt-get', 'sudo']) {
  writeFileSync(join(stubs, tool), `#!/bin/sh\necho "${tool} $*" >> '${mark}'\n`);
  chmodSync(join(stubs, tool), 0o755);
}

function setup(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['scripts/setup.sh', ...args], {
    cwd: scratch,
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, PATH: `${stubs}:${process.env.PATH}` },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('scripts/setup.sh arguments', () => {
  it('--help prints what it installs (npm ci among it) and runs no step', () => {
    for (const flag of ['--help', '-h']) {
      const r = setup(flag);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^Usage: bash scripts\/setup\.sh /);
      expect(r.stdout).toMatch(/npm ci/);
      expect(r.stderr).toBe('');
    }
    expect(existsSync(mark)).toBe(false);
  });

  it('an unknown option is refused in one line, exit 2, before any step', () => {
    const r = setup('--gpu');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("setup: unknown option '--gpu' (setup.sh takes none; --help says what it installs)\n");
    expect(existsSync(mark)).toBe(false);
  });
});
