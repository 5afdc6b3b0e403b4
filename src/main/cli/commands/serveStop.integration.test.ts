/**
 * Stopping browser mode (`npm start` where Electron cannot run, `arlarena serve`) with Ctrl-C or SIGTERM is the
 * normal way to end it: it printed "arlarena serve: SIGTERM, stopping…" on stderr, read as an error (under `start`
 * too). Now it ends with exit code 0 and one calm line on stdout, nothing on stderr from the lab; a server that cannot
 * start keeps its error and exit code 1. Real processes: the CLI spawned as `npm start` runs it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-serve-stop-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI with `args`, sent `signal` once its banner (and the compute line after it) is out; what it printed and how it ended. */
async function stopWith(args: string[], signal: NodeJS.Signals | null): Promise<Ended> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', join(dir, 'data'), ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let sent = false;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (signal && !sent && /workers: /.test(stdout)) sent = child.kill(signal);
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const [code, sig] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  clearTimeout(killer);
  return { code, signal: sig, stdout, stderr };
}

/** The lab's own lines on stderr (tfjs-node's native library logs its own there). */
const labLines = (stderr: string) => stderr.split('\n').filter((l) => /arlarena|SIGTERM|SIGINT/.test(l));

it('serve stopped by SIGTERM and start (browser mode) by SIGINT exit 0 with one calm line, no error', async () => {
  const serve = await stopWith(['serve', '--no-build'], 'SIGTERM');
  expect(serve.code, serve.stderr).toBe(0);
  expect(labLines(serve.stderr)).toEqual([]);
  expect(serve.stdout.trimEnd().split('\n').pop()).toBe('stopped');

  const start = await stopWith(['start', '--browser', '--no-build'], 'SIGINT');
  expect(start.code, start.stderr).toBe(0);
  expect(labLines(start.stderr)).toEqual([]);
  expect(start.stdout.trimEnd().split('\n').pop()).toBe('stopped');
}, 200_000);

it('a server that cannot start keeps its error and exit code 1', async () => {
  const taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  const { port } = taken.address() as AddressInfo;
  try {
    const r = await stopWith(['serve', '--no-build', '--port', String(port)], null);
    expect(r.code).toBe(1);
    expect(labLines(r.stderr)).toEqual([
      `arlarena serve: cannot start the server: port ${port} is already in use; pick another --port or omit it for a free one`,
    ]);
  } finally {
    taken.close();
  }
}, 120_000);
