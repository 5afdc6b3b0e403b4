/**
 * Every `npm run bench:<x>` script answers `-- --help` with its usage (exit 0) and a mistyped option with one
 * line naming it plus the usage (exit 2) — no stack trace. The scripts come from package.json, so a
 * bench added later is covered too (bench/args.ts is the helper they share).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const scripts = Object.entries(
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
)
  .filter(([name]) => name.startsWith('bench:'))
  .map(([name, cmd]) => {
    const m = /^tsx (bench\/\S+\.ts)$/.exec(cmd);
    if (!m) throw new Error(`package.json script ${name} is "${cmd}"; this test expects "tsx bench/<file>.ts"`);
    return { name, file: m[1] };
  });

function run(file: string, args: string[]) {
  const tsx = join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  return spawnSync(process.execPath, [tsx, file, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
}

describe('bench scripts on the command line', () => {
  it('finds the bench scripts in package.json', () => {
    expect(scripts.map((s) => s.name)).toEqual(expect.arrayContaining(['bench:envs', 'bench:model', 'bench:rl', 'bench:ui']));
  });

  for (const { name, file } of scripts) {
    it(`${name} -- --help prints its usage and exits 0`, () => {
      const r = run(file, ['--help']);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(`npm run ${name}`);
      expect(r.stdout).toMatch(/--help/);
    });

    it(`${name} with an unknown option names it in one line, then the usage (exit 2)`, () => {
      const r = run(file, ['--no-such-option']);
      expect(r.status).toBe(2);
      expect(r.stderr.split('\n')[0]).toMatch(new RegExp(`^${name}: .*--no-such-option`));
      expect(r.stderr).toContain(`npm run ${name}`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  }
});
