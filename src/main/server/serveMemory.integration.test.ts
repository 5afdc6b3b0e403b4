/**
 * `arlarena serve` under hostile load, its peak RSS (VmHWM) read from /proc (hardening round three: a 100 MB body
 * cost ≈ 570 MB, three parallel 255 MB bodies 3.0 GB; a "dashboard" answering 1.2 GB killed the server with
 * ERR_STRING_TOO_LONG). Now: three parallel 100 MB bodies — one is read, the others get 503 at once; a dashboard
 * answering without end is cut at 16 MiB and remotes.test answers UNAVAILABLE; the server stays up throughout.
 * The measured peaks are printed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
let serve: ChildProcess;
let port = 0;
let token = '';
let dashboard: Server;

async function peakMb(): Promise<number> {
  const s = await readFile(`/proc/${serve.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(s)![1]) / 1024;
}
async function rssMb(): Promise<number> {
  const s = await readFile(`/proc/${serve.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(s)![1]) / 1024;
}

function post(body: Buffer | string): Promise<{ status: number; json: any }> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/call',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-arlarena-token': token, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', () => resolve({ status: -1, json: null }));
    req.end(body);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-serve-mem-'));
  serve = spawn(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', join(dir, 'data'), 'serve', '--json', '--no-build'], {
    cwd: ROOT,
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    serve.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    serve.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
  });
  ({ port, token } = JSON.parse(line));
  dashboard = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    const pump = () => {
      while (!res.destroyed) if (!res.write(chunk)) return void res.once('drain', pump);
    };
    res.on('error', () => undefined);
    pump();
  });
  await new Promise<void>((r) => dashboard.listen(0, '127.0.0.1', r));
}, 60_000);

afterAll(async () => {
  serve?.kill('SIGTERM');
  dashboard?.closeAllConnections();
  dashboard?.close();
  await rm(dir, { recursive: true, force: true });
});

it('three parallel 100 MB bodies: one is read, two get 503; memory stays near one body', async () => {
  const before = await rssMb();
  const big = Buffer.from(`{"method":"runs.list","input":{"pad":"${'x'.repeat(100 * 1000 * 1000)}"}}`);
  const results = await Promise.all([post(big), post(big), post(big)]);
  const statuses = results.map((r) => r.status).sort();
  const peak = await peakMb();
  console.log(`three parallel 100 MB bodies: ${statuses.join(', ')}; serve RSS before ${before.toFixed(0)} MB, peak ${peak.toFixed(0)} MB`);
  expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(1);
  expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
  expect(results.find((r) => r.status === 200)!.json.error.code).toBe('VALIDATION');
  expect(peak - before).toBeLessThan(900);
  expect((await post('{"method":"runs.list","input":{}}')).json.ok).toBe(true);
}, 120_000);

it('a dashboard answering without end: remotes.test is UNAVAILABLE and serve stays up', async () => {
  const url = `http://127.0.0.1:${(dashboard.address() as AddressInfo).port}`;
  expect((await post(JSON.stringify({ method: 'remotes.add', input: { name: 'huge', url } }))).json.ok).toBe(true);
  const before = await peakMb();
  const r = await post(JSON.stringify({ method: 'remotes.test', input: { name: 'huge' } }));
  const peak = await peakMb();
  console.log(`remotes.test against an endless answer: ${r.json.error?.code}; serve peak ${before.toFixed(0)} → ${peak.toFixed(0)} MB`);
  expect(r.json.error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('over the 16 MiB') });
  expect(serve.exitCode).toBeNull();
  expect((await post('{"method":"runs.list","input":{}}')).json.ok).toBe(true);
}, 120_000);
