import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const run = (args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

describe('arlarena serve / start usage', () => {
  it('bad options exit 2 with one line saying what is wrong', () => {
    const port = run(['--data-dir', '/tmp/arlarena-usage-test', 'serve', '--port', 'eighty']);
    expect(port.status).toBe(2);
    expect(port.stderr.trim().split('\n')).toHaveLength(1);
    expect(port.stderr).toContain('--port must be an integer 0–65535, got "eighty"');
    const start = run(['--data-dir', '/tmp/arlarena-usage-test', 'start', '--frobnicate']);
    expect(start.status).toBe(2);
    expect(start.stderr.trim().split('\n')).toHaveLength(1);
    expect(start.stderr).toContain('frobnicate');
  });
});
