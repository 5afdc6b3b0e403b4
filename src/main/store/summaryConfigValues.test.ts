/**
 * Run summaries carry the config's values by dotted path (RunSummary.configValues), so the runs table's config
 * columns and queries (`optim.lr > 1e-4`) never load whole runs — also for runs another process wrote.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '../../core/config/index';
import { RunStore } from './runStore';

let dir: string;
let app: RunStore;
let cli: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-cfgvals-'));
  app = await RunStore.open(dir);
  cli = await RunStore.open(dir);
});
afterEach(async () => {
  await cli.close();
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

const config = {
  preset: 'sampo',
  optim: { lr: 3e-4, betas: [0.9, 0.999] },
  algorithm: { loss: 'sapo', kl: null },
  training: { bf16: true },
};

it("a run's summary lists its config values by path: numbers, text, booleans, null, arrays as JSON", async () => {
  const r = await app.createRun({ preset: 'sampo', env: 'sokoban', seed: 3, config, totalSteps: 8, status: 'completed' });
  const s = (await app.listRuns()).find((x) => x.id === r.id)!;
  expect(s.configValues).toEqual({
    preset: 'sampo',
    'optim.lr': 3e-4,
    'optim.betas': '[0.9,0.999]',
    'algorithm.loss': 'sapo',
    'algorithm.kl': null,
    'training.bf16': true,
  });
});

it('a run another process created is listed with its config values too', async () => {
  const r = await cli.createRun({
    preset: 'grpo',
    env: 'sokoban',
    seed: 1,
    config: { optim: { lr: 1e-5 } },
    totalSteps: 4,
    status: 'stopped',
  });
  const s = (await app.listRuns()).find((x) => x.id === r.id);
  expect(s?.configValues).toEqual({ 'optim.lr': 1e-5 });
});

it("a lab run's config gives the paths the runs-table guide queries (optim.lr, algorithm.policyLoss.mode, preset)", async () => {
  const r = await app.createRun({
    preset: 'sampo',
    env: 'sokoban',
    seed: 0,
    config: DEFAULT_CONFIG as unknown as Record<string, unknown>,
    totalSteps: 8,
    status: 'completed',
  });
  const v = (await app.listRuns()).find((x) => x.id === r.id)!.configValues!;
  expect(typeof v['optim.lr']).toBe('number');
  expect(v['algorithm.policyLoss.mode']).toBe(DEFAULT_CONFIG.algorithm.policyLoss.mode);
  expect(v.preset).toBe(DEFAULT_CONFIG.preset);
});
