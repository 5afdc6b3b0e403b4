/**
 * The desktop app's call channel (ipcCall.ts) and its file dialog grants (pathGrants.ts), tested as handler logic
 * with the electron module NOT loaded: the Electron binary cannot run on these machines, so no real window or
 * dialog exists here. If anything on this path imported electron, the mock below would throw and the file fail.
 * `openDialog` stands in for the native dialog (the user's choice); everything behind it — the router, the
 * handlers, the run store, the importer and the follower — is the real one.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

vi.mock('electron', () => {
  throw new Error('the electron module was loaded: the IPC call logic must not need it');
});

import { createHandlers } from '../api/handlers/index';
import { createRouter, type Router } from '../api/router';
import type { CallContext, PickRequest } from '../api/types';
import { createLab, type LabServices } from '../app/lab';
import { createIpcCallHandler } from './ipcCall';
import { createPathGrants } from './pathGrants';

const APP_URL = 'app://lab/index.html';
const win = { isDestroyed: () => false };
const fromWindow = { sender: win, senderFrame: { url: APP_URL, parent: null } } as never;

let dir: string;
let log: string;
let services: LabServices;
let router: Router;
/** What the stand-in dialog answers next (null: the user cancelled), and what it was asked. */
let chosen: string | null;
let asked: PickRequest[];
let call: (method: string, input?: unknown) => Promise<any>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-ipc-paths-'));
  log = join(dir, 'secret-and-steps.log');
  const steps = [1, 2, 3].map((i) => `step:${i} - actor/entropy:0.5 - critic/score/mean:0.${i}`).join('\n');
  await writeFile(log, `password=hunter2\n${steps}\n`, { mode: 0o600 });
  services = createLab({
    dataDir: join(dir, 'data'),
    insideElectron: true,
    computeInfo: async () => ({ training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'test', available: ['wasm'] }),
  });
  await services.lab();
  router = createRouter(createHandlers(services), { onInternalError: (m, e) => console.error(m, e) });
});
afterAll(async () => {
  await services.dispose();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  chosen = null;
  asked = [];
  const handle = createIpcCallHandler({
    router,
    appContents: () => win as never,
    isAppUrl: (url) => url.startsWith('app://lab/'),
    pathGrants: createPathGrants(async (request) => {
      asked.push(request);
      return chosen;
    }),
  });
  call = (method, input) => handle(fromWindow, method, input);
});

const runCount = async () => ((await call('runs.list', {})).value as unknown[]).length;

describe('Electron IPC, electron module not loaded: a path comes only from the native dialog', () => {
  it('refuses a path the window sends to imports.path and follow.start, reading nothing', async () => {
    for (const method of ['imports.path', 'follow.start']) {
      const r = await call(method, { path: log });
      expect(r, method).toMatchObject({
        ok: false,
        error: { code: 'VALIDATION', field: 'path', message: expect.stringContaining('only through its own file dialog') },
      });
      expect(r.error.hint).toContain('imports.pick');
      // A path beside a grant, or a relative one, is refused the same way: the window names no path at all.
      expect((await call(method, { path: 'x.log', grant: 'A'.repeat(24) })).error).toMatchObject({ code: 'VALIDATION', field: 'path' });
    }
    expect(await runCount()).toBe(0);
    expect((await call('follow.list')).value).toEqual([]);
    expect(asked).toEqual([]);
  });

  it('imports what the user picked in the dialog, named by an opaque grant that can be used again', async () => {
    chosen = log;
    const picked = await call('imports.pick', { kind: 'file', purpose: 'import' });
    expect(asked).toEqual([{ kind: 'file', purpose: 'import' }]);
    expect(picked.ok).toBe(true);
    const { grant, path } = picked.value;
    expect(path).toBe(log);
    expect(grant).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
    expect(grant).not.toContain('secret');
    const first = await call('imports.path', { grant, format: 'verl-console' });
    expect(first).toMatchObject({ ok: true, value: { format: 'verl-console', steps: 3 } });
    expect(first.value.runIds).toHaveLength(1);
    // The same grant again (the import panel's "import again"): a duplicate unless `again`.
    expect((await call('imports.path', { grant, format: 'verl-console' })).value).toMatchObject({
      runIds: [],
      duplicateOf: first.value.runIds,
    });
    expect((await call('imports.path', { grant, format: 'verl-console', again: true })).value.runIds).toHaveLength(1);
  });

  it('follows what the user picked for following', async () => {
    chosen = log;
    const { grant } = (await call('imports.pick', { kind: 'file', purpose: 'follow' })).value;
    const started = await call('follow.start', { grant });
    expect(started.ok).toBe(true);
    expect(((await call('follow.list')).value as { runId: string }[]).map((f) => f.runId)).toEqual([started.value.runId]);
    expect((await call('follow.stop', { runId: started.value.runId })).ok).toBe(true);
  });

  it('refuses a grant the dialog never gave; a cancelled dialog answers null and grants nothing', async () => {
    const before = await runCount();
    const forged = await call('imports.path', { grant: 'AAAAAAAAAAAAAAAAAAAAAAAA' });
    expect(forged.error).toMatchObject({
      code: 'VALIDATION',
      field: 'grant',
      message: expect.stringContaining("was not given by this app's file dialog"),
    });
    expect((await call('imports.path', { grant: '../../etc/passwd' })).error).toMatchObject({ code: 'VALIDATION', field: 'grant' });
    expect((await call('imports.path', {})).error).toMatchObject({ code: 'VALIDATION', field: 'grant' });
    chosen = null;
    expect(await call('imports.pick', { kind: 'folder', purpose: 'import' })).toEqual({ ok: true, value: null });
    expect(await runCount()).toBe(before);
  });

  it('the handlers refuse a path too when the call comes with the dialog grants (no bypass of the IPC check)', async () => {
    const ctx: CallContext = { transport: 'electron', publishDownload: null, pathGrants: createPathGrants(async () => log) };
    expect((await router.call('imports.path', { path: log }, ctx)).ok).toBe(false);
    expect(await router.call('follow.start', { path: log }, ctx)).toMatchObject({ ok: false, error: { field: 'path' } });
  });

  it('in browser mode imports.pick is UNAVAILABLE and a grant is refused (paths there are bounded by serve --allow-dir)', async () => {
    const browser: CallContext = { transport: 'browser', publishDownload: null, importRoots: [] };
    /** The error of a call that must fail (a success fails the test, saying what it answered). */
    const refusal = async (method: string, input: unknown) => {
      const r = await router.call(method, input, browser);
      if (r.ok) throw new Error(`${method} succeeded in browser mode: ${JSON.stringify(r.value)}`);
      return r.error;
    };
    expect(await refusal('imports.pick', { kind: 'file' })).toMatchObject({ code: 'UNAVAILABLE' });
    expect(await refusal('imports.path', { grant: 'A'.repeat(24) })).toMatchObject({ code: 'VALIDATION', field: 'grant' });
    expect(await refusal('imports.path', { path: log })).toMatchObject({ code: 'VALIDATION', field: 'path' });
  });

  it('a call from anything but our window is FORBIDDEN_SENDER before any of this', async () => {
    const handle = createIpcCallHandler({
      router,
      appContents: () => win as never,
      isAppUrl: (url) => url.startsWith('app://lab/'),
      pathGrants: createPathGrants(async () => log),
    });
    const other = { sender: { isDestroyed: () => false }, senderFrame: { url: APP_URL, parent: null } } as never;
    expect(await handle(other, 'imports.pick', { kind: 'file' })).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
    expect(
      await handle({ sender: win, senderFrame: { url: 'https://evil.example/', parent: null } } as never, 'imports.path', { path: log }),
    ).toMatchObject({ ok: false, error: { code: 'FORBIDDEN_SENDER' } });
  });
});
