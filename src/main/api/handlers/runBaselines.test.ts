/** runs.baselines through the real router and a real store: the numbers are the engine's baselines on the run's tasks. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LabServices } from '../../app/lab';
import { writeSyntheticRun } from '../../store/synthetic';
import { shippedWarmStartRoot } from '../../store/warmStartFiles';
import { resolveConfig } from '../../../core/config/index';
import type { RunConfig } from '../../../core/config/types';
import { envSpecOf } from '../../../core/training/warmstart';
import { baselines } from '../../../core/training/evaluate';
import { heldOutSeeds } from '../../../core/envs/index';
import type { RunRecord } from '../../../shared/api';
import { createRunsHandlers } from './runs';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createRunBaselines } from './runBaselines';

let lab: HandlerTestLab;
let dir: string;
let services: LabServices;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

function config(env: string, overrides: Record<string, string | number>): RunConfig {
  const { config: c, issues } = resolveConfig('sampo', env, overrides);
  if (!c) throw new Error(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
  return c;
}

async function storeRun(c: RunConfig): Promise<RunRecord> {
  const { store } = await services.lab();
  return store.createRun({
    env: c.env.name,
    preset: c.preset,
    seed: c.seed,
    config: structuredClone(c) as unknown as Record<string, unknown>,
    totalSteps: c.training.steps,
    status: 'completed',
  });
}

beforeAll(async () => {
  lab = await openHandlerTestLab('arl-baselines-', createRunsHandlers);
  ({ dir, services } = lab);
});
afterAll(() => lab.close());

describe('runs.baselines', () => {
  it("equals the engine's random and expert baselines on the run's validation tasks, with the shipped warm start's held-out score", async () => {
    const c = config('sokoban', { 'training.valEpisodes': 24, 'warmStart.source': 'shipped' });
    const run = await storeRun(c);
    const res = await call('runs.baselines', { runId: run.id });
    expect(res.ok).toBe(true);
    const want = baselines(envSpecOf(c), heldOutSeeds(24));
    expect(res.value.env).toBe('sokoban');
    expect(res.value.episodes).toBe(24);
    expect(res.value.random).toEqual(want.random);
    expect(res.value.expert).toEqual(want.expert);
    expect(res.value.random.n).toBe(24);

    const shipped = join(shippedWarmStartRoot(), 'sokoban');
    const held = JSON.parse(await readFile(join(shipped, 'heldout.json'), 'utf8'));
    const manifest = JSON.parse(await readFile(join(shipped, 'manifest.json'), 'utf8'));
    const ws = res.value.warmStart;
    expect(ws.source).toBe(`shipped:sokoban@${manifest.files['weights.bin'].sha256.slice(0, 12)}`);
    expect(ws.greedy).toEqual(held.greedy.success);
    expect(ws.sampled).toEqual(held.sampled.success);
    expect(ws.greedy.n).toBe(held.episodes);
    expect(ws.sampledTemperature).toBe(held.temperatureSampled);
  });

  it("uses the run's env settings, horizon and episode count, and has no warm-start numbers for scratch", async () => {
    const c = config('frozenlake', { 'training.valEpisodes': 40, 'warmStart.source': 'scratch', 'env.maxSteps': 5 });
    const run = await storeRun(c);
    const res = await call('runs.baselines', { runId: run.id });
    expect(res.ok).toBe(true);
    const want = baselines(envSpecOf(c), heldOutSeeds(40));
    expect({ random: res.value.random, expert: res.value.expert }).toEqual(want);
    expect(res.value.warmStart).toBeNull();
  });

  it('says when the shipped checkpoint was evaluated under a different horizon', async () => {
    const recipe = JSON.parse(await readFile(join(shippedWarmStartRoot(), 'sokoban', 'recipe.json'), 'utf8'));
    const c = config('sokoban', { 'warmStart.source': 'shipped', 'env.maxSteps': recipe.maxSteps - 1, 'training.valEpisodes': 8 });
    const res = await call('runs.baselines', { runId: (await storeRun(c)).id });
    expect(res.value.warmStart.note).toContain(`env.maxSteps ${recipe.maxSteps}; this run uses ${recipe.maxSteps - 1}`);
  });

  it('computes once per (env spec, episodes)', async () => {
    const c = config('sokoban', { 'training.valEpisodes': 16, 'warmStart.source': 'scratch' });
    const get = createRunBaselines();
    const rec = await storeRun(c);
    const a = await get(rec);
    const b = await get({ ...rec, id: 'other' });
    expect(a.ok && b.ok).toBe(true);
    if (a.ok && b.ok) expect(b.value.random).toBe(a.value.random);
    const other = await get(await storeRun(config('sokoban', { 'training.valEpisodes': 17, 'warmStart.source': 'scratch' })));
    if (a.ok && other.ok) expect(other.value.random).not.toBe(a.value.random);
  });

  it('reports a tampered or missing shipped heldout.json in a note, keeping the baselines', async () => {
    const root = join(dir, 'ws');
    await mkdir(join(root, 'sokoban'), { recursive: true });
    const src = join(shippedWarmStartRoot(), 'sokoban');
    for (const f of ['manifest.json', 'recipe.json']) await copyFile(join(src, f), join(root, 'sokoban', f));
    const held = JSON.parse(await readFile(join(src, 'heldout.json'), 'utf8'));
    held.greedy.success.rate = 0.99;
    await writeFile(join(root, 'sokoban', 'heldout.json'), `${JSON.stringify(held, null, 2)}\n`);
    const rec = await storeRun(config('sokoban', { 'training.valEpisodes': 8, 'warmStart.source': 'shipped' }));
    const tampered = await createRunBaselines({ warmStartRoot: root })(rec);
    expect(tampered.ok).toBe(true);
    if (!tampered.ok) return;
    expect(tampered.value.warmStart?.greedy).toBeUndefined();
    expect(tampered.value.warmStart?.note).toMatch(/heldout\.json does not match its SHA-256/);
    expect(tampered.value.random.n).toBe(8);
    const missing = await createRunBaselines({ warmStartRoot: join(dir, 'nowhere') })(rec);
    expect(missing.ok && missing.value.warmStart?.note).toMatch(/no shipped sokoban checkpoint .*arlarena warmstart --env sokoban/);
  });

  it('NOT_FOUND for an unknown run, VALIDATION for bad input, UNAVAILABLE for a run without an env config', async () => {
    const missing = await call('runs.baselines', { runId: 'ghost' });
    expect(missing.error.code).toBe('NOT_FOUND');
    expect(missing.error.field).toBe('runId');
    for (const bad of [{ runId: 'not a run id!' }, {}, { runId: 'x', extra: 1 }, { runId: 7 }]) {
      const res = await call('runs.baselines', bad);
      expect(res.ok).toBe(false);
      expect(res.error.code).toBe('VALIDATION');
    }
    expect((await call('runs.baselines', { runId: 'not a run id!' })).error.field).toBe('runId');
    const { store } = await services.lab();
    const synthetic = await writeSyntheticRun(store, { steps: 20, seed: 1 });
    const res = await call('runs.baselines', { runId: synthetic.id });
    expect(res.error.code).toBe('UNAVAILABLE');
    expect(res.error.message).toMatch(/has no config\.env, so there are no validation tasks/);
    expect(res.error.hint).toBeTruthy();
    const c = config('sokoban', {});
    const broken = await storeRun({ ...c, training: { ...c.training, valEpisodes: 0 } });
    const bad = await call('runs.baselines', { runId: broken.id });
    expect(bad.error.code).toBe('UNAVAILABLE');
    expect(bad.error.message).toMatch(/has an unusable config\.training\.valEpisodes \(0: /);
  });
});
