import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createHandlers } from '../api/handlers/index';
import { createRouter } from '../api/router';
import { createLab, type LabServices } from '../app/lab';
import type { ApiMethodName } from '../../shared/api';
import { ok } from '../../shared/result';
import type { CallContext, Handlers } from '../api/types';
import { IMMUTABLE_CACHE, TOKEN_HEADER, startServer, type RunningServer } from './server';

const TOKEN = 'test-token-0123456789';
let server: RunningServer;
let staticDir: string;

const services: LabServices = createLab({
  dataDir: '/tmp/arlarena-server-test',
  computeInfo: async () => ({ training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'test', available: ['wasm'] }),
  insideElectron: false,
});
const bus = services.bus;

beforeAll(async () => {
  staticDir = mkdtempSync(join(tmpdir(), 'arlarena-static-'));
  writeFileSync(join(staticDir, 'index.html'), '<!doctype html><title>ARLArena Lab</title>');
  writeFileSync(join(staticDir, 'app.js'), 'console.log(1)');
  mkdirSync(join(staticDir, 'assets'));
  writeFileSync(join(staticDir, 'assets', 'index-DgoIQNdT.js'), 'console.log(2)');
  writeFileSync(join(staticDir, 'assets', 'notes.js'), 'console.log(3)');
  const handlers = {
    ...createHandlers(services),
    // Stands in for the bundle exporter: writes a file and publishes it for download, as bundles.export does.
    'bundles.export': (_input: unknown, ctx: CallContext) => {
      const path = join(staticDir, 'export.zip');
      writeFileSync(path, 'PK-fake-bundle');
      return ok({
        fileName: 'run "1".zip',
        path,
        bytes: 14,
        sha256: 'x',
        downloadUrl: ctx.publishDownload ? ctx.publishDownload(path, 'run "1".zip') : null,
      });
    },
  } as Handlers<ApiMethodName>;
  const router = createRouter(handlers, { validateOutput: true, onInternalError: () => undefined });
  server = await startServer({ router, bus, staticDir, token: TOKEN, maxBodyBytes: 4096, log: () => undefined });
});

afterAll(async () => {
  await server.close();
  rmSync(staticDir, { recursive: true, force: true });
});

const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${server.origin}/api/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-arlarena-token': TOKEN, ...headers },
    body,
  });

/** A raw HTTP request (fetch normalises paths and fixes Host). */
function raw(path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, headers }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function appInfoStillWorks() {
  const res = await post(JSON.stringify({ method: 'app.info' }));
  expect(res.status).toBe(200);
  expect(((await res.json()) as { ok: boolean }).ok).toBe(true);
}

describe('browser-mode server: calls', () => {
  it('prints a loopback URL carrying the token in the fragment', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/#token=${TOKEN}`);
    expect(server.port).toBeGreaterThan(0);
  });

  it('answers a call with a typed Result', async () => {
    const res = await post(JSON.stringify({ method: 'app.info' }));
    const body = (await res.json()) as { ok: boolean; value: { transport: string } };
    expect(body.ok).toBe(true);
    expect(body.value.transport).toBe('browser');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses calls without the token, with a wrong token, and accepts a Bearer token', async () => {
    for (const headers of [{ 'x-arlarena-token': '' }, { 'x-arlarena-token': 'wrong' }, { 'x-arlarena-token': TOKEN.slice(0, -1) + 'X' }]) {
      const res = await post(JSON.stringify({ method: 'app.info' }), headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    }
    const noHeader = await fetch(`${server.origin}/api/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"method":"app.info"}',
    });
    expect(noHeader.status).toBe(401);
    const bearer = await fetch(`${server.origin}/api/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: '{"method":"app.info"}',
    });
    expect(bearer.status).toBe(200);
  });

  it('reports a malformed argument as VALIDATION naming the field', async () => {
    const res = await post(JSON.stringify({ method: 'runs.get', input: { runId: 'no spaces allowed' } }));
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'runId' } });
    const missing = await post(JSON.stringify({ method: 'sessions.start', input: { env: 'sokoban' } }));
    expect(await missing.json()).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'preset' } });
  });

  it('reports malformed JSON, a body that is not an object, no method, an unknown method', async () => {
    const bad = await post('{"method": "app.info",');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: '(body)' } });
    expect(await (await post('[1,2]')).json()).toMatchObject({ error: { code: 'VALIDATION', field: '(body)' } });
    expect(await (await post('{}')).json()).toMatchObject({ error: { code: 'VALIDATION', field: 'method' } });
    expect(await (await post('{"method":"runs.explode"}')).json()).toMatchObject({ error: { code: 'UNKNOWN_METHOD' } });
    await appInfoStillWorks();
  });

  it('refuses a body over the limit with 413 and keeps serving', async () => {
    const res = await post(JSON.stringify({ method: 'bundles.import', input: { fileName: 'x', dataBase64: 'A'.repeat(10_000) } }));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: '(body)' } });
    // Without a content-length header (chunked), the limit still holds.
    const chunked = await new Promise<number>((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/api/call',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-arlarena-token': TOKEN, 'transfer-encoding': 'chunked' },
        },
        (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        },
      );
      req.on('error', () => resolve(-1));
      for (let i = 0; i < 10; i++) req.write('x'.repeat(1000));
      req.end();
    });
    expect([413, -1]).toContain(chunked);
    await appInfoStillWorks();
  });

  it('wants JSON and POST', async () => {
    expect((await post('{"method":"app.info"}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect((await fetch(`${server.origin}/api/call`, { headers: { 'x-arlarena-token': TOKEN } })).status).toBe(405);
    expect((await fetch(`${server.origin}/api/nothing`)).status).toBe(404);
  });

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const res = await raw('/', { host: 'evil.example:80' });
    expect(res.status).toBe(403);
    await appInfoStillWorks();
  });

  it('survives garbage on the socket', async () => {
    const net = await import('node:net');
    await new Promise<void>((resolve) => {
      const sock = net.connect(server.port, '127.0.0.1', () => sock.write('NOT HTTP AT ALL\r\n\r\n'));
      sock.on('data', () => undefined);
      sock.on('close', () => resolve());
      sock.on('error', () => resolve());
    });
    await appInfoStillWorks();
  });
});

describe('browser-mode server: downloads', () => {
  it('serves a published file to the token in a header only; the link itself carries no token', async () => {
    const r = (await (await post(JSON.stringify({ method: 'bundles.export', input: { runId: 'r1' } }))).json()) as {
      ok: boolean;
      value: { downloadUrl: string };
    };
    expect(r.ok).toBe(true);
    const url = r.value.downloadUrl;
    expect(url).toMatch(/^\/api\/download\/[A-Za-z0-9_-]+$/);
    expect(url).not.toContain(TOKEN);
    const res = await fetch(`${server.origin}${url}`, { headers: { [TOKEN_HEADER]: TOKEN } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('PK-fake-bundle');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="run _1_.zip"');
    expect((await fetch(`${server.origin}${url}`)).status).toBe(401);
    expect((await fetch(`${server.origin}${url}`, { headers: { [TOKEN_HEADER]: 'nope' } })).status).toBe(401);
    // The launch token in the query string (how links used to carry it) is refused, and says how to do it.
    const inQuery = await fetch(`${server.origin}${url}?token=${TOKEN}`);
    expect(inQuery.status).toBe(401);
    expect(((await inQuery.json()) as { error: { message: string } }).error.message).toContain('header');
    expect((await fetch(`${server.origin}/api/download/unknown`, { headers: { [TOKEN_HEADER]: TOKEN } })).status).toBe(404);
  });
});

describe('browser-mode server: static files', () => {
  it('serves the renderer with a strict CSP', async () => {
    const res = await fetch(`${server.origin}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('ARLArena Lab');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await fetch(`${server.origin}/app.js`)).headers.get('content-type')).toContain('javascript');
  });

  it('lets the browser keep content-hashed assets for good, and nothing else', async () => {
    const hashed = await fetch(`${server.origin}/assets/index-DgoIQNdT.js`);
    expect(hashed.status).toBe(200);
    expect(hashed.headers.get('cache-control')).toBe(IMMUTABLE_CACHE);
    for (const path of ['/', '/index.html', '/app.js', '/assets/notes.js', '/?view=compare']) {
      expect((await fetch(`${server.origin}${path}`)).headers.get('cache-control'), path).toBe('no-cache');
    }
  });

  it('falls back to the shell for client routes and never leaves the folder', async () => {
    expect((await fetch(`${server.origin}/runs`)).status).toBe(200);
    expect((await fetch(`${server.origin}/missing.js`)).status).toBe(404);
    for (const path of ['/..%2f..%2fetc%2fpasswd', '/%2e%2e/%2e%2e/etc/passwd.txt', '/../package.json']) {
      const res = await raw(path, { host: `127.0.0.1:${server.port}` });
      expect(res.text).not.toContain('root:');
      expect(res.text).not.toContain('arlarena-lab');
    }
  });
});

function openSocket(protocols: string[]): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/events`, protocols, { headers: { origin: server.origin } });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

function nextMessage(ws: WebSocket): Promise<any> {
  return new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(d.toString()))));
}

describe('browser-mode server: events over WebSocket', () => {
  it('refuses a socket without or with a wrong token', async () => {
    await expect(openSocket(['arlarena'])).rejects.toThrow('HTTP 401');
    await expect(openSocket(['arlarena', 'token.wrong'])).rejects.toThrow('HTTP 401');
  });

  it('refuses a socket from a foreign origin', async () => {
    await expect(
      new Promise((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/events`, ['arlarena', `token.${TOKEN}`], {
          headers: { origin: 'http://evil.example' },
        });
        ws.once('open', resolve);
        ws.once('unexpected-response', (_q, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      }),
    ).rejects.toThrow('HTTP 403');
  });

  it('delivers subscribed events, acks, and reports bad messages without closing', async () => {
    const ws = await openSocket(['arlarena', `token.${TOKEN}`]);
    ws.send('not json');
    expect(await nextMessage(ws)).toMatchObject({ type: 'error', error: { code: 'VALIDATION' } });
    ws.send(JSON.stringify({ type: 'subscribe', event: 'no.such.event' }));
    expect(await nextMessage(ws)).toMatchObject({ type: 'error', error: { code: 'VALIDATION', field: 'event' } });
    ws.send(JSON.stringify({ type: 'subscribe', event: 'runs.changed' }));
    expect(await nextMessage(ws)).toEqual({ type: 'subscribed', event: 'runs.changed' });
    const next = nextMessage(ws);
    bus.emit('runs.changed', { runId: 'r42' });
    expect(await next).toEqual({ type: 'event', event: 'runs.changed', payload: { runId: 'r42' } });
    ws.send(JSON.stringify({ type: 'unsubscribe', event: 'runs.changed' }));
    expect(await nextMessage(ws)).toEqual({ type: 'unsubscribed', event: 'runs.changed' });
    expect(bus.listenerCount('runs.changed')).toBe(0);
    ws.close();
  });

  it("drops a closed socket's subscriptions", async () => {
    const ws = await openSocket(['arlarena', `token.${TOKEN}`]);
    ws.send(JSON.stringify({ type: 'subscribe', event: 'run.alert' }));
    await nextMessage(ws);
    expect(bus.listenerCount('run.alert')).toBe(1);
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close();
    });
    // The server drops the subscription when it sees the close: wait for that, not for a fixed time.
    for (let waited = 0; bus.listenerCount('run.alert') > 0 && waited < 5_000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    expect(bus.listenerCount('run.alert')).toBe(0);
  });
});
