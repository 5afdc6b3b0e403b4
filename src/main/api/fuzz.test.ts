/**
 * A deterministic fuzz of the API door: seeded random calls — real and made-up method names, inputs
 * built from the contract's field names, hostile keys (`__proto__`, `constructor`), wrong types, huge and odd
 * strings, numbers at the edges, deep nesting, mutated valid calls — through the real router and handlers (the
 * synthetic job stands in for the trainer). Every reply must be a typed Result; none may be INTERNAL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../shared/result';
import { writeSyntheticRun } from '../store/synthetic';
import { createHandlers } from './handlers/index';
import { openHandlerTestLab, type HandlerTestLab } from '../testing/testLab';

const CALLS = Number(process.env.ARLARENA_FUZZ_CALLS ?? 1500);
/** Left out: they watch or read arbitrary paths on this machine (covered by their own tests). */
const SKIP = new Set(['follow.start', 'follow.stop', 'imports.path']);

let lab: HandlerTestLab;
const runIds: string[] = [];

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-fuzz-', (s) => createHandlers(s) as unknown as Record<string, unknown>);
  const { store } = await lab.services.lab();
  for (const seed of [1, 2]) runIds.push((await writeSyntheticRun(store, { steps: 30, seed, shape: 'cispo_collapse', collapseAt: 20 })).id);
});
afterAll(() => lab.close());

/** mulberry32: a small seeded generator, so a failing call can be replayed from its index. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = [
  'runId',
  'runIds',
  'keys',
  'key',
  'search',
  'status',
  'preset',
  'env',
  'overrides',
  'seed',
  'maxPoints',
  'xAxis',
  'step',
  'limit',
  'name',
  'tags',
  'alertId',
  'acknowledged',
  'fileName',
  'dataBase64',
  'sortBy',
  'sortDir',
  'tag',
  'includeCheckpoint',
  'split',
];
const HOSTILE = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', ''];

describe('API fuzz', () => {
  it(`${CALLS} seeded random calls: every reply is a typed Result and none is INTERNAL`, async () => {
    const methods = Object.keys(createHandlers(lab.services)).filter((m) => !SKIP.has(m));
    const r = rng(17);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
    const str = (): string =>
      pick([
        () => pick(runIds),
        () => pick(runIds).slice(0, 8),
        () => '../../etc/passwd',
        () => '',
        () => 'x'.repeat(10_000),
        () => 'sampo',
        () => 'sokoban',
        () => 'optim.lr',
        () => 'env.settings.constructor',
        () => '\u0000\u202e',
        () => 'actor/grad_norm',
        () => String(r()),
        () => 'running,completed',
      ])();
    const num = (): number => pick([0, -1, 1, 0.5, 1e308, -1e308, 2 ** 53, 3, 1e-300, 400, 1_000_000]);
    const value = (depth: number): unknown => {
      const k = r();
      if (depth > 4 || k < 0.3) return pick([str, num, () => r() < 0.5, () => null])();
      if (k < 0.45) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1));
      const o: Record<string, unknown> = {};
      for (let i = Math.floor(r() * 4); i > 0; i--)
        Object.defineProperty(o, r() < 0.12 ? pick(HOSTILE) : pick(FIELDS), {
          value: value(depth + 1),
          enumerable: true,
          configurable: true,
          writable: true,
        });
      return o;
    };
    const deep = (n: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = r() < 0.5 ? [v] : { search: v };
      return v;
    };
    // Valid calls with one field replaced: they get past the schema into the handlers.
    const templates = (): Array<[string, Record<string, unknown>]> => {
      const id = pick(runIds);
      return [
        ['runs.get', { runId: id }],
        ['runs.metrics', { runIds: [id], keys: ['actor/grad_norm'], maxPoints: 50 }],
        ['runs.rename', { runId: id, name: 'n' }],
        ['runs.tag', { runId: id, tags: ['a'] }],
        ['runs.trajectories', { runId: id }],
        ['runs.check', { runId: id }],
        ['runs.metricKeys', { runId: id }],
        ['alerts.list', { runId: id }],
        ['alerts.ack', { runId: id, alertId: 'x' }],
        ['config.resolve', { preset: 'sampo', env: 'sokoban', overrides: { 'optim.lr': 1e-4 } }],
        ['bundles.import', { fileName: 'x.zip', dataBase64: 'UEsDBAo=' }],
        ['runs.list', { search: 'synthetic', sortBy: 'step' }],
        ['runs.getMany', { runIds: [id] }],
      ];
    };
    const mutated = (): [string, unknown] => {
      const [m, t] = pick(templates());
      const keys = Object.keys(t);
      const out: Record<string, unknown> = { ...t };
      if (r() < 0.8) out[pick(keys)] = r() < 0.5 ? str() : value(1);
      return [m, out];
    };
    const counts: Record<string, number> = {};
    for (let i = 0; i < CALLS; i++) {
      if (r() < 0.3) {
        const [m, input] = mutated();
        const res = (await lab.call(m, input)) as { ok: boolean; error?: { code: string; message: string } };
        const code = res.ok ? 'ok' : res.error!.code;
        expect(code, `call ${i}: ${m} ${JSON.stringify(input)?.slice(0, 200)} → ${res.ok ? '' : res.error!.message}`).not.toBe('INTERNAL');
        if (!res.ok) expect(ERROR_CODES).toContain(code);
        counts[code] = (counts[code] ?? 0) + 1;
        continue;
      }
      const method =
        r() < 0.07 ? pick(['', 'runs', 'runs.list.x', '__proto__.x', 'constructor', 'runs.__proto__', 42, null]) : pick(methods);
      const k = r();
      const input =
        k < 0.05 ? deep(60 + Math.floor(r() * 2000)) : k < 0.1 ? undefined : k < 0.2 ? pick([str, num, () => [], () => true])() : value(0);
      const res = (await lab.call(method as string, input)) as { ok: boolean; value?: unknown; error?: { code: string; message: string } };
      const where = `call ${i}: ${String(method)} ${JSON.stringify(input)?.slice(0, 200)}`;
      expect(typeof res.ok, where).toBe('boolean');
      const code = res.ok ? 'ok' : res.error!.code;
      if (!res.ok) {
        expect(ERROR_CODES, where).toContain(code);
        expect(res.error!.message.length, where).toBeGreaterThan(0);
      }
      expect(code, `${where} → ${res.ok ? '' : res.error!.message}`).not.toBe('INTERNAL');
      counts[code] = (counts[code] ?? 0) + 1;
    }
    console.log(`API fuzz: ${CALLS} calls, replies ${JSON.stringify(counts)}`);
    expect(counts.VALIDATION).toBeGreaterThan(CALLS / 4);
  }, 120_000);
});
