/**
 * The shipped warm-start checkpoints (resources/warmstart/<env>):
 *   - each directory verifies against its SHA-256 manifest and loads as a policy;
 *   - the presets' default run (warmStart.source = 'shipped') accepts it, and a mismatching run (history window,
 *     model size) or a missing directory is refused with an error naming the field / path and the fix;
 *   - greedy, it beats the random baseline on a small fixed held-out sample (greedy decoding on fixed seeds is
 *     deterministic, so this is a fixed comparison, not a flaky one);
 *   - the laptop preset (sampo) runs an RL step from it end to end, with π_ref = the shipped checkpoint.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig, type RunConfig } from '../src/core/config/index';
import { deserializeModel } from '../src/core/agent/checkpoint';
import { evaluatePolicy, baselines } from '../src/core/training/evaluate';
import { envSpecOf } from '../src/core/training/warmstart';
import { runTraining } from '../src/core/training/trainer';
import { heldOutSeeds } from '../src/core/envs/index';
import { Rng } from '../src/core/util/rng';
import { setupCompute, type ComputeSetup } from '../src/main/compute/index';
import { readWarmStartDir, shippedWarmStartRoot } from '../src/main/store/warmStartFiles';
import { shippedLoaderFor, shippedWarmStartDir } from '../src/main/store/shippedWarmStart';
import { recorder, useWasm } from './tinyTrainer';

const ENVS = ['sokoban', 'frozenlake', 'household', 'shop'] as const;
/** Held-out sample per env for the beats-random check (the README's numbers use 200+). */
const SAMPLE = 48;

let compute: ComputeSetup;
beforeAll(async () => {
  await useWasm();
  compute = await setupCompute({ backend: 'wasm', rolloutEngine: 'onnxruntime' });
});

function defaultConfig(env: string, extra: Record<string, string | number | boolean> = {}): RunConfig {
  const { config, issues } = resolveConfig('sampo', env, extra);
  if (!config) throw new Error(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
  return config;
}

describe.each(ENVS.map((e) => [e]))('shipped warm start: %s', (env) => {
  it('verifies against its manifest, loads, and is what the default preset starts from', async () => {
    const dir = shippedWarmStartDir(env);
    const { files, manifest, recipe } = await readWarmStartDir(dir);
    expect(Object.keys(manifest.files).sort()).toEqual(['heldout.json', 'model.json', 'recipe.json', 'tokenizer.json', 'weights.bin']);
    const loaded = deserializeModel(files);
    expect(loaded.weights.config.vocabSize).toBe(loaded.tokenizer.size);
    expect(recipe.env).toBe(env);
    const cfg = defaultConfig(env);
    expect(cfg.warmStart.source).toBe('shipped');
    const ws = await shippedLoaderFor(cfg)({ env, modelSize: cfg.model.size, historyWindow: cfg.env.historyWindow });
    expect(ws?.ref).toBe(`shipped:${env}@${manifest.files['weights.bin'].sha256.slice(0, 12)}`);
  });

  it('refuses a run whose history window or model does not match, naming the field', async () => {
    const k = defaultConfig(env).env.historyWindow;
    const cfg = defaultConfig(env, { 'env.historyWindow': k + 1, 'model.size': 'small' });
    const load = shippedLoaderFor(cfg)({ env, modelSize: 'small', historyWindow: k + 1 });
    await expect(load).rejects.toThrow(
      /env\.historyWindow: checkpoint \d+, run \d+.*model\.size: checkpoint "nano", run "small".*warmStart\.source=scratch/,
    );
  });

  it(`beats the random baseline greedily on ${SAMPLE} fixed held-out tasks`, async () => {
    const { files } = await readWarmStartDir(shippedWarmStartDir(env));
    const { weights, tokenizer } = deserializeModel(files);
    const cfg = defaultConfig(env);
    const spec = envSpecOf(cfg);
    const seeds = heldOutSeeds(SAMPLE);
    const engine = await compute.createRolloutEngine(weights);
    const { summary } = await evaluatePolicy({
      engine,
      tokenizer,
      spec,
      seeds,
      temperature: 0,
      topP: 1,
      topK: 0,
      maxResponseTokens: cfg.rollout.maxResponseTokens,
      maxSeqLen: weights.config.maxSeqLen,
      rng: new Rng(1),
    });
    await engine.dispose();
    const base = baselines(spec, seeds);
    expect(summary.success.rate).toBeGreaterThan(base.random.rate);
  }, 300_000);
});

describe('shipped warm start: errors', () => {
  it('a missing checkpoint is an error naming the path and both fixes, not a silent BC run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'arlarena-noship-'));
    const cfg = defaultConfig('sokoban');
    await expect(shippedLoaderFor(cfg, root)({ env: 'sokoban', modelSize: 'nano', historyWindow: cfg.env.historyWindow })).rejects.toThrow(
      /no shipped sokoban checkpoint at .*manifest\.json missing.*arlarena warmstart --env sokoban.*warmStart\.source=scratch/,
    );
    expect(shippedWarmStartRoot()).toMatch(/resources[/\\]warmstart$/);
  });
});

describe('laptop preset from the shipped checkpoint', () => {
  it('sampo on sokoban: one RL step completes with π_ref = the shipped checkpoint', async () => {
    const cfg = defaultConfig('sokoban', {
      'training.steps': 1,
      'training.valEpisodes': 2,
      'training.validateEvery': 0,
      'training.checkpointEvery': 0,
      'rollout.tasksPerStep': 2,
      'rollout.groupSize': 2,
      'env.maxSteps': 3,
      'optim.miniBatchRows': 6,
      'algorithm.filter.coldStartSteps': 0,
      'compute.backend': 'wasm',
    });
    const { hooks, rec } = recorder();
    const res = await runTraining(
      cfg,
      {
        clock: { now: () => performance.now() },
        compute: { info: compute.info, createRolloutEngine: compute.createRolloutEngine },
        loadWarmStart: shippedLoaderFor(cfg),
      },
      hooks,
    );
    expect(res.status).toBe('completed');
    expect(rec.statuses.some((s) => s.phase === 'warmstart' && /loaded shipped warm start shipped:sokoban@/.test(s.message ?? ''))).toBe(
      true,
    );
    const v = rec.metrics[0].values;
    expect(v['batch/rows']).toBeGreaterThan(0);
    expect(Number.isFinite(v['actor/grad_norm'])).toBe(true);
    expect(Number.isFinite(v['perf/step_s'])).toBe(true);
  }, 300_000);
});
