/**
 * The browser-mode API refuses a foreign Origin with 403 as the README promises (only the
 * WebSocket checked it), keeps same-origin and no-Origin (CLI, curl) calls working, and refuses a 200k-deep JSON
 * argument at the door as VALIDATION (not INTERNAL "Maximum call stack size exceeded"), as does the router every
 * transport (IPC too) goes through; keys every object has (`__proto__`, `constructor`) are refused there as well.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers } from '../api/handlers/index';
import { createRouter } from '../api/router';
import { createLab, type LabServices } from '../app/lab';
import type { ApiMethodName } from '../../shared/api';
import type { Handlers } from '../api/types';
import { startServer, type RunningServer } from './server';
import { postApiCall } from '../testing/apiPost';

const TOKEN = 'test-token-hardening-0123';
let server: RunningServer;
const services: LabServices = createLab({
  dataDir: '/tmp/arlarena-server-hardening',
  computeInfo: async () => ({ training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'test', available: ['wasm'] }),
  insideElectron: false,
});
const router = createRouter(createHandlers(services) as Handlers<ApiMethodName>, {
  validateOutput: true,
  onInternalError: () => undefined,
});

beforeAll(async () => {
  server = await startServer({
    router,
    bus: services.bus,
    staticDir: null,
    token: TOKEN,
    maxBodyBytes: 4 * 1024 * 1024,
    log: () => undefined,
  });
});
afterAll(async () => {
  await server.close();
});

const call = (body: string, headers: Record<string, string> = {}) => postApiCall(server.port, TOKEN, body, headers);

const deep = (n: number) => `{"method":"runs.list","input":{"search":${'['.repeat(n)}${']'.repeat(n)}}}`;

describe('browser-mode API hardening', () => {
  it('a foreign Origin gets 403; same origin and no Origin work', async () => {
    const body = '{"method":"app.info"}';
    const evil = await call(body, { origin: 'http://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.json.error.code).toBe('UNAUTHORIZED');
    expect(evil.json.error.message).toContain('http://evil.example');
    expect((await call(body, { origin: 'null' })).status).toBe(403);
    expect((await call(body, { origin: server.origin })).status).toBe(200);
    expect((await call(body)).status).toBe(200);
  });

  it('a 200k-deep JSON argument is refused as VALIDATION over HTTP and by the router', async () => {
    const r = await call(deep(200_000));
    expect(r.status).toBe(200);
    expect(r.json.ok).toBe(false);
    expect(r.json.error.code).toBe('VALIDATION');
    expect(r.json.error.message).toMatch(/nested deeper than 64 levels/);
    const viaRouter = await router.call('runs.list', JSON.parse(deep(200_000)).input, { transport: 'electron', publishDownload: null });
    expect(!viaRouter.ok && viaRouter.error.code).toBe('VALIDATION');
    // Ordinary nesting is untouched.
    const fine = await router.call('runs.list', { search: 'x' }, { transport: 'electron', publishDownload: null });
    expect(fine.ok).toBe(true);
  });

  it('keys every JavaScript object has are refused at the door', async () => {
    const r = await call('{"method":"sessions.start","input":{"preset":"sampo","env":"sokoban","overrides":{"__proto__":{"x":1}}}}');
    expect(r.json.error.code).toBe('VALIDATION');
    expect(r.json.error.field).toBe('overrides.__proto__');
    const c = await router.call('runs.list', { constructor: 1 }, { transport: 'electron', publishDownload: null });
    expect(!c.ok && c.error.code).toBe('VALIDATION');
    expect(!c.ok && c.error.message).toMatch(/"constructor" is a name every JavaScript object has/);
  });
});
