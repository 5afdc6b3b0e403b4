/** runs.getMany through the real router (input and output checked against the contract) and a real store. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEventBus } from '../events';
import { createRouter, type Router } from '../router';
import type { MainServices } from '../../services';
import type { CallContext } from '../types';
import { getLab } from '../../sessions/lab';
import { writeSyntheticRun } from '../../store/synthetic';
import { createRunsHandlers } from './runs';

const JOB = fileURLToPath(new URL('../../sessions/testJobs/synthetic.ts', import.meta.url));
const ctx: CallContext = { transport: 'browser', publishDownload: null };
let dir: string;
let services: MainServices;
let router: Router;
const disposers: Array<() => Promise<void> | void> = [];
const call = async (m: string, input?: unknown): Promise<any> => router.call(m, input, ctx);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-getmany-'));
  services = {
    dataDir: dir,
    bus: createEventBus(),
    computeInfo: async () => ({ training: 'wasm', rollout: 'tfjs', detail: 'test', available: ['wasm'] }),
    electronAvailable: () => false,
    onDispose: (s) => void disposers.push(s),
    dispose: async () => {
      for (const d of disposers.reverse()) await d();
    },
  };
  await getLab(services, { jobModule: JOB, flushMs: 50 });
  router = createRouter(createRunsHandlers(services) as never, { validateOutput: true, onInternalError: (m, e) => console.error(m, e) });
});
afterAll(async () => {
  await services.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe('runs.getMany', () => {
  it('returns the records runs.get returns, in the order asked, and lists the ids with no run', async () => {
    const { store } = await getLab(services);
    const a = await writeSyntheticRun(store, { steps: 30, seed: 1, shape: 'calm', name: 'a' });
    const b = await writeSyntheticRun(store, { steps: 30, seed: 2, shape: 'cispo_collapse', name: 'b' });
    const res = await call('runs.getMany', { runIds: [b.id, 'gone-run', a.id] });
    expect(res.ok).toBe(true);
    expect(res.value.runs.map((r: { id: string }) => r.id)).toEqual([b.id, a.id]);
    expect(res.value.missing).toEqual(['gone-run']);
    expect(res.value.runs[0]).toEqual((await call('runs.get', { runId: b.id })).value);
    expect(res.value.runs[1]).toEqual((await call('runs.get', { runId: a.id })).value);
  });

  it('names the field when the ids are bad', async () => {
    const empty = await call('runs.getMany', { runIds: [] });
    expect(empty.error.code).toBe('VALIDATION');
    expect(empty.error.field).toBe('runIds');
    const bad = await call('runs.getMany', { runIds: ['not a run id!'] });
    expect(bad.error.code).toBe('VALIDATION');
    expect(bad.error.field).toBe('runIds.0');
    const tooMany = await call('runs.getMany', { runIds: Array.from({ length: 65 }, (_, i) => `r${i}`) });
    expect(tooMany.error.field).toBe('runIds');
  });
});
