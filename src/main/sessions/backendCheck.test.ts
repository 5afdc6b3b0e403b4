/**
 * A forced compute backend this machine does not have is refused before the run is created,
 * so no failed run is left behind.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../store/runStore';
import { SessionError, SessionManager } from './sessionManager';

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-be-'));
  store = await RunStore.open(dir);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const detect = () => ({
  training: 'wasm',
  rollout: 'tfjs',
  detail: 'tfjs-wasm; @tensorflow/tfjs-node-gpu not installed',
  available: ['wasm', 'cpu'],
});

describe('backend availability', () => {
  it('compute.backend=tensorflow-gpu on a machine without it: refused with the available list, no run created', async () => {
    const mgr = new SessionManager({ store, detectBackends: detect });
    const e = await mgr
      .startNew({ preset: 'sampo', env: 'sokoban', seed: 1, totalSteps: 3, config: { compute: { backend: 'tensorflow-gpu' } } })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SessionError);
    expect((e as SessionError).code).toBe('VALIDATION');
    expect((e as Error).message).toMatch(
      /compute\.backend = "tensorflow-gpu" is not available on this machine.*available: wasm, cpu.*no run was created/,
    );
    expect(await store.listRuns()).toEqual([]);
    await mgr.dispose();
  });
});

describe('imported runs', () => {
  it('an imported run whose config does not validate is refused on resume, not trained', async () => {
    const rec = await store.createRun({
      preset: 'custom-x',
      env: 'sokoban',
      seed: 1,
      totalSteps: 3,
      tags: ['imported'],
      config: { preset: 'custom-x', optim: { lr: 1e9 } },
      status: 'interrupted',
    });
    const mgr = new SessionManager({ store, detectBackends: detect });
    await expect(mgr.resume(rec.id)).rejects.toThrow(
      /was imported with a config that is not a valid run config \(unknown preset "custom-x"/,
    );
    expect((await store.getRun(rec.id))?.status).toBe('interrupted');
    await mgr.dispose();
  });
});
