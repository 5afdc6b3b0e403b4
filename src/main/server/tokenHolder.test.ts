/**
 * What the launch token does not give (hardening round three, security items): through the real server and
 * handlers, a page cannot name files outside the folders `serve --allow-dir` allowed (and cannot tell a missing
 * file from a secret one), a bundle does not carry a copy of a file that is not a log, a token file named by the
 * page is never read, and the WebSocket refuses a token in its URL even when it is right.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createHandlers } from '../api/handlers/index';
import { createRouter } from '../api/router';
import { createLab, type LabServices } from '../app/lab';
import type { ApiMethodName } from '../../shared/api';
import type { Handlers } from '../api/types';
import { exportRun } from '../bundles/exportBundle';
import { startServer, type RunningServer } from './server';
import { postApiCall } from '../testing/apiPost';

const TOKEN = 'test-token-holder-0123456789';
let dir: string;
let allowed: string;
let outside: string;
let services: LabServices;
let server: RunningServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-token-holder-'));
  allowed = join(dir, 'logs');
  outside = join(dir, 'home');
  await mkdir(allowed, { recursive: true });
  await mkdir(outside, { recursive: true });
  services = createLab({
    dataDir: join(dir, 'data'),
    computeInfo: async () => ({ training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'test', available: ['wasm'] }),
    insideElectron: false,
  });
  const router = createRouter(createHandlers(services) as Handlers<ApiMethodName>, {
    validateOutput: true,
    onInternalError: () => undefined,
  });
  server = await startServer({ router, bus: services.bus, staticDir: null, token: TOKEN, log: () => undefined, allowDirs: [allowed] });
});
afterAll(async () => {
  await server?.close();
  await services?.dispose();
  await rm(dir, { recursive: true, force: true });
});

const call = async (method: string, input: unknown): Promise<any> =>
  (await postApiCall(server.port, TOKEN, JSON.stringify({ method, input }))).json;

const SECRET_LOG = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nstep:1 - a:1\n';

describe('imports by path from a page', () => {
  it('outside the allowed folders: refused with one message whether the file exists or not, nothing imported', async () => {
    const secret = join(outside, 'credentials');
    await writeFile(secret, SECRET_LOG, { mode: 0o600 });
    const a = await call('imports.path', { path: secret, format: 'verl-console' });
    const b = await call('imports.path', { path: join(outside, 'nope.log') });
    const c = await call('imports.path', { path: '/', format: 'tensorboard' });
    expect(a.ok).toBe(false);
    expect(a.error).toMatchObject({ code: 'VALIDATION', field: 'path', hint: expect.stringContaining('--allow-dir') });
    expect(a.error.message).toContain('in browser mode the lab reads files by path only inside');
    expect(b.error.message.replace(join(outside, 'nope.log'), 'P')).toBe(a.error.message.replace(secret, 'P'));
    expect(c.error.code).toBe('VALIDATION');
    const f = await call('follow.start', { path: secret });
    expect(f.error).toMatchObject({ code: 'VALIDATION', field: 'path' });
    // A link inside the allowed folder pointing out of it is refused too.
    await symlink(secret, join(allowed, 'link.log'));
    expect((await call('imports.path', { path: join(allowed, 'link.log') })).error).toMatchObject({ code: 'VALIDATION', field: 'path' });
    expect((await call('imports.path', { path: join(allowed, '..', 'home', 'credentials') })).error).toMatchObject({
      code: 'VALIDATION',
      field: 'path',
    });
    expect((await call('runs.list', {})).value).toEqual([]);
  });

  it('inside an allowed folder: imported; a file with other lines than steps is kept as a run but not copied into its bundle', async () => {
    const p = join(allowed, 'notes.log');
    await writeFile(p, SECRET_LOG);
    const r = await call('imports.path', { path: p });
    expect(r.ok).toBe(true);
    const id = r.value.runIds[0];
    const { store } = await services.lab();
    const rec = (await store.getRun(id))!;
    expect(rec.source!.notes.join(' ')).toContain('no copy of the file is kept');
    const bundle = await exportRun(store, id, { out: join(dir, 'b.zip') });
    const entries = unzipSync(new Uint8Array(await readFile(bundle.path)));
    expect(Object.keys(entries).filter((k) => k.startsWith('source/'))).toEqual([]);
    expect(Buffer.from(await readFile(bundle.path)).includes('wJalrXUtnFEMI')).toBe(false);
    // A real log (every line a step) keeps its copy.
    const log = join(allowed, 'train.log');
    let text = '';
    for (let i = 1; i <= 5; i++) text += `step:${i} - actor/entropy:0.5 - critic/score/mean:0.${i}\n`;
    await writeFile(log, text);
    const r2 = await call('imports.path', { path: log });
    const entries2 = unzipSync(
      new Uint8Array(await readFile((await exportRun(store, r2.value.runIds[0], { out: join(dir, 'c.zip') })).path)),
    );
    expect(new TextDecoder().decode(entries2['source/0-train.log'])).toBe(text);
  });

  it('a format forced on a file keeps no copy of it', async () => {
    const p = join(allowed, 'forced.log');
    let text = '';
    for (let i = 1; i <= 5; i++) text += `step:${i} - a:${i}\n`;
    await writeFile(p, text);
    const r = await call('imports.path', { path: p, format: 'verl-console' });
    const { store } = await services.lab();
    const rec = (await store.getRun(r.value.runIds[0]))!;
    expect(rec.source!.notes.join(' ')).toContain('its format was forced');
    const entries = unzipSync(new Uint8Array(await readFile((await exportRun(store, rec.id, { out: join(dir, 'd.zip') })).path)));
    expect(Object.keys(entries).filter((k) => k.startsWith('source/'))).toEqual([]);
  });
});

describe('the WebSocket', () => {
  const open = (path: string, protocols: string[]) =>
    new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, protocols, { headers: { origin: server.origin } });
      ws.once('open', () => resolve(ws));
      ws.once('error', reject);
    });

  it('refuses the token in the URL, even the right one; takes it in the subprotocol', async () => {
    await expect(open(`/api/events?token=${TOKEN}`, ['arlarena'])).rejects.toThrow(/40[01]/);
    await expect(open(`/api/events?token=${TOKEN}`, ['arlarena', `token.${TOKEN}`])).rejects.toThrow(/40[01]/);
    const ws = await open('/api/events', ['arlarena', `token.${TOKEN}`]);
    ws.close();
  });
});
