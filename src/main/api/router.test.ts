import { describe, expect, it, vi } from 'vitest';
import { ok, err } from '../../shared/result';
import { ApiFailure } from './errors';
import { createHandlers } from './handlers/index';
import { createRouter } from './router';
import type { CallContext, Handlers } from './types';
import type { ApiMethodName } from '../../shared/api';
import { createLab, type LabServices } from '../app/lab';
import { unavailableArea } from './handlers/unavailable';

const ctx: CallContext = { transport: 'browser', publishDownload: null };

function fakeServices(): LabServices {
  return createLab({
    dataDir: '/tmp/arlarena-router-test',
    computeInfo: async () => ({ training: 'wasm', rollout: 'onnxruntime-cpu', detail: 'test', available: ['wasm'] }),
    insideElectron: false,
  });
}

/** The real handler map with a few methods replaced. */
function routerWith(overrides: Partial<Handlers<ApiMethodName>>, onInternalError = vi.fn()) {
  const handlers = { ...createHandlers(fakeServices()), ...overrides } as Handlers<ApiMethodName>;
  return { router: createRouter(handlers, { validateOutput: true, onInternalError }), onInternalError };
}

describe('router: validation at the door', () => {
  it('names the missing field when the argument is absent', async () => {
    const { router } = routerWith({});
    const r = await router.call('runs.get', undefined, ctx);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('VALIDATION');
    expect(r.error.field).toBe('runId');
    expect(r.error.message).toContain('runs.get');
  });

  it('names a nested malformed field and shows the value received', async () => {
    const { router } = routerWith({});
    const r = await router.call('runs.metrics', { runIds: ['a'], keys: ['x'], maxPoints: 3 }, ctx);
    expect(!r.ok && r.error.code).toBe('VALIDATION');
    expect(!r.ok && r.error.field).toBe('maxPoints');
    expect(!r.ok && r.error.message).toContain('got 3');
    const r2 = await router.call('runs.metrics', { runIds: ['ok', 'bad id!'], keys: ['x'] }, ctx);
    expect(!r2.ok && r2.error.field).toBe('runIds.1');
  });

  it('rejects unknown keys, naming them and listing what is accepted', async () => {
    const { router } = routerWith({});
    const r = await router.call('runs.get', { runId: 'abc', extra: 1 }, ctx);
    expect(!r.ok && r.error.code).toBe('VALIDATION');
    expect(!r.ok && r.error.field).toBe('extra');
    expect(!r.ok && r.error.hint).toContain('runId');
  });

  it('rejects a non-object argument', async () => {
    const { router } = routerWith({});
    const r = await router.call('runs.get', 'abc', ctx);
    expect(!r.ok && r.error.code).toBe('VALIDATION');
    expect(!r.ok && r.error.field).toBe('(argument)');
  });

  it('accepts a missing optional argument (and null as missing)', async () => {
    const { router } = routerWith({});
    expect((await router.call('catalog.metrics', undefined, ctx)).ok).toBe(true);
    expect((await router.call('catalog.metrics', null, ctx)).ok).toBe(true);
  });

  it('passes the parsed input (schema output) to the handler', async () => {
    const seen: unknown[] = [];
    const { router } = routerWith({
      'runs.rename': (input) => {
        seen.push(input);
        return err('NOT_FOUND', 'no such run');
      },
    });
    await router.call('runs.rename', { runId: 'r1', name: '  spaced  ' }, ctx);
    expect(seen).toEqual([{ runId: 'r1', name: 'spaced' }]);
  });
});

describe('router: unknown methods and failures', () => {
  it('answers UNKNOWN_METHOD for names outside the contract, including prototype keys', async () => {
    const { router } = routerWith({});
    for (const m of ['runs.nope', 'toString', '__proto__', '', 42, null]) {
      const r = await router.call(m, {}, ctx);
      expect(!r.ok && r.error.code).toBe('UNKNOWN_METHOD');
    }
  });

  it('turns a thrown error into INTERNAL without rejecting', async () => {
    const { router, onInternalError } = routerWith({
      'app.info': () => {
        throw new Error('boom');
      },
    });
    const r = await router.call('app.info', undefined, ctx);
    expect(!r.ok && r.error.code).toBe('INTERNAL');
    expect(!r.ok && r.error.message).toContain('boom');
    expect(onInternalError).toHaveBeenCalledOnce();
  });

  it('turns a rejected promise and a thrown non-Error into INTERNAL', async () => {
    const { router } = routerWith({
      'app.info': async () => Promise.reject(new TypeError('async boom')),
      'sessions.list': () => {
        throw 'a string';
      },
    });
    expect(await router.call('app.info', undefined, ctx)).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
    expect(await router.call('sessions.list', undefined, ctx)).toMatchObject({
      ok: false,
      error: { code: 'INTERNAL', message: expect.stringContaining('a string') },
    });
  });

  it('keeps the code of an ApiFailure', async () => {
    const { router, onInternalError } = routerWith({
      'runs.get': () => {
        throw new ApiFailure('NOT_FOUND', 'no run r1', { field: 'runId', hint: 'see runs.list' });
      },
    });
    const r = await router.call('runs.get', { runId: 'r1' }, ctx);
    expect(r).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'no run r1', field: 'runId', hint: 'see runs.list' } });
    expect(onInternalError).not.toHaveBeenCalled();
  });

  it('catches replies that break the output schema (dev/test) and non-Result replies', async () => {
    const { router } = routerWith({
      'sessions.list': () => ok([{ runId: 'r', status: 'bogus' }] as never),
      'runs.list': () => [] as never,
    });
    const r = await router.call('sessions.list', undefined, ctx);
    expect(!r.ok && r.error.code).toBe('INTERNAL');
    expect(!r.ok && r.error.message).toContain('0.status');
    expect(await router.call('runs.list', undefined, ctx)).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
  });

  it('an area that has not landed answers UNAVAILABLE for each of its methods, after validation', async () => {
    const placeholder = unavailableArea('bundles', 'not here yet');
    expect(Object.keys(placeholder).sort()).toEqual(['bundles.export', 'bundles.import']);
    const { router } = routerWith(placeholder);
    const r = await router.call('bundles.import', { fileName: 'x.zip', dataBase64: 'AA==' }, ctx);
    expect(r).toEqual({ ok: false, error: { code: 'UNAVAILABLE', message: 'bundles.import: not here yet' } });
    const bad = await router.call('bundles.import', { fileName: '' }, ctx);
    expect(!bad.ok && bad.error.code).toBe('VALIDATION');
  });
});

describe('app handlers', () => {
  it('app.info reports version, transport and the compute backend', async () => {
    const { router } = routerWith({});
    const r = await router.call('app.info', undefined, ctx);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value).toMatchObject({ name: 'ARLArena Lab', transport: 'browser', compute: { training: 'wasm' }, electronAvailable: false });
    expect((r.value as { version: string }).version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('catalog.metrics returns the shared metric catalog', async () => {
    const { router } = routerWith({});
    const r = await router.call('catalog.metrics', undefined, ctx);
    expect(r.ok && Array.isArray(r.value) && r.value.length > 10).toBe(true);
  });

  it('catalog.presets, catalog.envs and catalog.configFields come from the engine catalogs', async () => {
    const { router } = routerWith({});
    const presets = await router.call('catalog.presets', undefined, ctx);
    expect(presets.ok && (presets.value as { recommended: boolean }[]).some((p) => p.recommended)).toBe(true);
    const envs = await router.call('catalog.envs', undefined, ctx);
    expect(envs.ok && (envs.value as { name: string }[]).map((e) => e.name)).toContain('sokoban');
    const fields = await router.call('catalog.configFields', undefined, ctx);
    expect(fields.ok && (fields.value as { path: string }[]).some((f) => f.path === 'optim.lr')).toBe(true);
  });

  it('config.resolve returns a config, or issues naming the field', async () => {
    const { router } = routerWith({});
    const good = await router.call('config.resolve', { preset: 'sampo', env: 'sokoban' }, ctx);
    expect(good.ok && (good.value as { config: unknown }).config).toBeTruthy();
    const bad = await router.call('config.resolve', { preset: 'sampo', env: 'sokoban', overrides: { 'optim.lr': 'fast' } }, ctx);
    expect(bad.ok).toBe(true);
    if (!bad.ok) return;
    const value = bad.value as { config: unknown; issues: { field: string }[] };
    expect(value.config).toBeNull();
    expect(value.issues.map((i) => i.field)).toContain('optim.lr');
  });
});
