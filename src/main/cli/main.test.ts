/**
 * Global options after the command: `arlarena train … --data-dir D` used to fail with
 * "Unknown option '--data-dir'" because only the arguments before the command were read as global.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { takeGlobalOptions } from './main';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dirs: string[] = [];
const run = (args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ARLARENA_DATA_DIR: '' },
  });

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('takeGlobalOptions', () => {
  it('takes --data-dir DIR and --data-dir=DIR from anywhere before "--" and leaves the rest in order', () => {
    expect(takeGlobalOptions(['--preset', 'grpo', '--data-dir', '/d', '--steps', '3'])).toEqual({
      dataDir: '/d',
      rest: ['--preset', 'grpo', '--steps', '3'],
    });
    expect(takeGlobalOptions(['synth', '--data-dir=/e'])).toEqual({ dataDir: '/e', rest: ['synth'] });
    expect(takeGlobalOptions(['--name', 'x', '--', '--data-dir', '/f'])).toEqual({
      dataDir: undefined,
      rest: ['--name', 'x', '--', '--data-dir', '/f'],
    });
    expect(takeGlobalOptions(['--data-dir', '/d', '--data-dir=/d'])).toEqual({ dataDir: '/d', rest: [] });
  });

  it('names what is wrong: a missing folder, or two different folders', () => {
    expect(() => takeGlobalOptions(['--data-dir'])).toThrow(/--data-dir needs a folder after it/);
    expect(() => takeGlobalOptions(['--data-dir', '--json'])).toThrow(/--data-dir needs a folder after it/);
    expect(() => takeGlobalOptions(['--data-dir='])).toThrow(/--data-dir= needs a folder/);
    expect(() => takeGlobalOptions(['--data-dir', '/a', '--data-dir', '/b'])).toThrow(
      /given twice with different folders \("\/a" and "\/b"\)/,
    );
  });
});

describe('arlarena with global options after the command', () => {
  it('writes to and lists from the --data-dir given after the command', () => {
    const dir = mkdtempSync(join(tmpdir(), 'arlarena-cli-global-'));
    dirs.push(dir);
    const synth = run(['runs', 'synth', '--steps', '5', '--json', '--data-dir', dir]);
    expect(synth.stderr).toBe('');
    expect(synth.status).toBe(0);
    const { runId } = JSON.parse(synth.stdout) as { runId: string };
    const list = run(['runs', '--json', `--data-dir=${dir}`]);
    expect(list.status).toBe(0);
    expect(list.stdout).toContain(runId);
    // Before or after the command: the same store.
    const before = run(['--data-dir', dir, 'runs', '--json']);
    expect(before.stdout).toBe(list.stdout);
  });

  it('refuses two different folders before and after the command, in one line (exit 2)', () => {
    const r = run(['--data-dir', '/tmp/arlarena-a', 'runs', '--data-dir', '/tmp/arlarena-b']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('given twice with different folders');
  });

  it('train takes --data-dir after its own options (its usage is checked before any training)', () => {
    const r = run(['train', '--preset', 'no-such-preset', '--data-dir', '/tmp/arlarena-cli-global-unused']);
    expect(r.stderr).not.toContain("Unknown option '--data-dir'");
    expect(r.stderr).toMatch(/no-such-preset/);
  });
});
