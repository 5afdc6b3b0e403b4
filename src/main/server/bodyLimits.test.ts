/**
 * Request bodies are bounded (hardening round three: a 100 MB body cost ≈ 570 MB of server memory, three parallel
 * 255 MB bodies 3.0 GB): over the limit → 413; a large body while another large one is being handled → 503 with
 * Retry-After, declared or chunked; small calls go on meanwhile, and the slot frees when the large call is answered.
 * Sizes are scaled down (limit 1 MiB, large past 64 KiB) to keep the test fast.
 */
import { request, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers } from '../api/handlers/index';
import { createRouter } from '../api/router';
import { createLab, type LabServices } from '../app/lab';
import type { ApiMethodName } from '../../shared/api';
import type { Handlers } from '../api/types';
import { DEFAULT_MAX_BODY_BYTES, startServer, type RunningServer } from './server';

const TOKEN = 'test-token-body-limits-01';
let services: LabServices;
let server: RunningServer;

beforeAll(async () => {
  services = createLab({
    dataDir: '/tmp/arlarena-body-limits',
    computeInfo: async () => ({ training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'test', available: ['wasm'] }),
    insideElectron: false,
  });
  const router = createRouter(createHandlers(services) as Handlers<ApiMethodName>, {
    validateOutput: true,
    onInternalError: () => undefined,
  });
  server = await startServer({
    router,
    bus: services.bus,
    staticDir: null,
    token: TOKEN,
    log: () => undefined,
    maxBodyBytes: 1024 * 1024,
    largeBodyBytes: 64 * 1024,
    maxLargeRequests: 1,
  });
});
afterAll(async () => {
  await server?.close();
  await services?.dispose();
});

/** A runs.list call padded with spaces to `bytes`; `hold` sends all but the last byte and waits for release(). */
function post(
  bytes: number,
  opts: { chunked?: boolean; hold?: boolean } = {},
): { done: Promise<{ status: number; retryAfter?: string; json: any }>; release: () => void; req: ClientRequest } {
  const head = '{"method":"runs.list","input":{}';
  const body = head + ' '.repeat(Math.max(0, bytes - head.length - 1)) + '}';
  let req!: ClientRequest;
  const done = new Promise<{ status: number; retryAfter?: string; json: any }>((resolve) => {
    req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: '/api/call',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-arlarena-token': TOKEN,
          ...(opts.chunked ? {} : { 'content-length': String(body.length) }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
            json: text ? JSON.parse(text) : null,
          }),
        );
      },
    );
    req.on('error', () => resolve({ status: -1, json: null }));
  });
  if (opts.hold) req.write(body.slice(0, -1));
  else req.end(body);
  return { done, release: () => req.end(body.slice(-1)), req };
}

describe('request bodies', () => {
  it('the default limit is imports.file upload limit as base64 plus 1 MiB', () => {
    expect(DEFAULT_MAX_BODY_BYTES).toBe(Math.ceil(150e6 / 3) * 4 + 1024 * 1024);
  });

  it('over the limit → 413', async () => {
    expect((await post(2 * 1024 * 1024).done).status).toBe(413);
  });

  it('one large request at a time: another → 503 + Retry-After (declared or chunked); small calls go on; the slot frees after the answer', async () => {
    const a = post(512 * 1024, { hold: true });
    await new Promise((r) => setTimeout(r, 200));
    const b = await post(200 * 1024).done;
    expect(b.status).toBe(503);
    expect(b.retryAfter).toBe('5');
    expect(b.json.error).toMatchObject({ code: 'UNAVAILABLE', field: '(body)' });
    const chunked = await post(200 * 1024, { chunked: true }).done;
    expect([503, -1]).toContain(chunked.status);
    const small = await post(1000).done;
    expect(small.status).toBe(200);
    expect(small.json.ok).toBe(true);
    a.release();
    expect((await a.done).status).toBe(200);
    const d = await post(200 * 1024).done;
    expect(d.status).toBe(200);
    expect(d.json.ok).toBe(true);
  });

  it('a large request whose client goes away frees the slot', async () => {
    const a = post(512 * 1024, { hold: true });
    await new Promise((r) => setTimeout(r, 200));
    a.req.destroy();
    await a.done;
    await new Promise((r) => setTimeout(r, 100));
    expect((await post(200 * 1024).done).status).toBe(200);
  });
});
