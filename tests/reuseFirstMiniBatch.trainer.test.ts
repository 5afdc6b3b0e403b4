/**
 * compute.reuseFirstMiniBatch ("less work per step"): the first mini-batch's old log-probs come from the
 * update's own first forward pass instead of a separate pass. Checked here on tfjs-wasm, through the real trainer:
 * - the log-probs a gradient shard returns are the ones a separate old-log-prob pass computes, row by row, on rows
 *   of different prompt and response lengths (the capture is aligned and cut to each response), and its ratios
 *   are exactly 1 (PPO KL 0);
 * - a first step with the reuse on and off sees the same rollouts and ends within float32 tolerance of each other,
 *   on one thread and on two gradient workers;
 * - when the reuse applies and when it cannot (EMPG, an in-reward KL, configs stored before the field).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { firstMiniBatchFromUpdate, runTraining } from '../src/core/training/trainer';
import { actorShardGradient, trainerLogProbs, type ShardRow } from '../src/core/training/shards';
import { readCheckpoint } from '../src/core/training/checkpoint';
import { PolicyModel, initWeights, resolveModelConfig } from '../src/core/agent/model';
import { Rng } from '../src/core/util/rng';
import type { TrainerDeps } from '../src/core/training/types';
import { GradPool } from '../src/main/compute/gradPool';
import { deps, deterministicPart, recorder, tinyConfig, useWasm, TEST_BACKEND } from './tinyTrainer';

beforeAll(useWasm);

function poolDeps(): TrainerDeps {
  const base = deps();
  return { ...base, compute: { ...base.compute, createGradientPool: (init) => GradPool.start({ ...init, backend: TEST_BACKEND }) } };
}

function randomRows(rng: Rng, n: number, vocab: number): ShardRow[] {
  return Array.from({ length: n }, () => ({
    promptIds: Array.from({ length: 3 + rng.int(12) }, () => rng.int(vocab)),
    responseIds: Array.from({ length: 1 + rng.int(9) }, () => rng.int(vocab)),
  }));
}

describe('the first mini-batch takes its old log-probs from its own update pass', () => {
  it('a shard asked for its log-probs returns, row by row, what a separate no-gradient pass computes', async () => {
    const cfg = resolveModelConfig({ size: 'custom', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, maxSeqLen: 64 }, 40);
    const model = PolicyModel.fromWeights(initWeights(cfg, new Rng(7)), 'reuse-probe');
    const rows = randomRows(new Rng(11), 9, cfg.vocabSize);
    const a = tinyConfig('grpo').algorithm;
    const separate = await trainerLogProbs(model, rows, 0.9, 2048);
    const g = actorShardGradient(model, {
      rows,
      old: rows.map(() => []),
      ref: null,
      adv: rows.map((_, i) => (i % 2 === 0 ? 1 : -1)),
      params: {
        ...a.policyLoss,
        aggregation: a.aggregation,
        mode: a.policyLoss.mode,
        entropyCoeff: a.entropyCoeff,
        kl: { enabled: false, type: a.kl.type, coef: 0 },
      },
      onPolicy: true,
      returnLogProbs: true,
      temperature: 0.9,
      mbTokens: rows.reduce((s, r) => s + r.responseIds.length, 0),
      budgetMB: 2048,
    });
    expect(g.logProbs).toBeDefined();
    expect(g.logProbs!.map((r) => r.length)).toEqual(rows.map((r) => r.responseIds.length));
    let maxDiff = 0;
    g.logProbs!.forEach((row, i) => row.forEach((x, j) => (maxDiff = Math.max(maxDiff, Math.abs(x - separate.logProbs[i][j])))));
    expect(maxDiff).toBeLessThan(1e-5);
    // Real log-probs, not zeros from padding: each is below 0 and the rows differ.
    expect(Math.max(...g.logProbs!.flat())).toBeLessThan(0);
    expect(g.metrics['actor/ppo_kl']).toBe(0);
    model.dispose();
  });

  for (const workers of [1, 2]) {
    it(`K = ${workers}: a first step with the reuse on and off has the same rollouts and ends within float32 tolerance`, async () => {
      const run = async (reuse: boolean) => {
        const r = recorder();
        const cfg = tinyConfig('grpo', { 'compute.workers': workers, 'compute.reuseFirstMiniBatch': reuse, 'training.checkpointEvery': 1 });
        await runTraining(cfg, workers > 1 ? poolDeps() : deps(), r.hooks);
        return { values: deterministicPart(r.rec.metrics)[0].values, policy: readCheckpoint(r.rec.checkpoints[0]).policy };
      };
      const on = await run(true);
      const off = await run(false);
      // Several mini-batches, so the reuse covers only part of the step.
      expect(on.values['actor/off_policy_step']).toBeGreaterThan(0);
      for (const k of Object.keys(off.values)) {
        if (k.startsWith('episode/') || k.startsWith('batch/') || k.startsWith('response_length/'))
          expect(on.values[k], k).toEqual(off.values[k]);
      }
      for (const k of [
        'actor/pg_loss',
        'actor/entropy',
        'actor/grad_norm',
        'critic/advantages_mean',
        'mismatch/logprob_abs_mean',
        'mismatch/logprob_abs_max',
      ]) {
        const x = off.values[k] as number;
        const y = on.values[k] as number;
        expect(Number.isFinite(x) && Number.isFinite(y), `${k}: ${x} / ${y}`).toBe(true);
        expect(Math.abs(x - y), `${k}: off ${x}, on ${y}`).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(x)));
      }
      let maxDiff = 0;
      for (const [name, { data: w }] of Object.entries(off.policy)) {
        const v = on.policy[name]?.data;
        expect(v?.length, name).toBe(w.length);
        for (let i = 0; i < w.length; i++) maxDiff = Math.max(maxDiff, Math.abs(w[i] - v[i]));
      }
      expect(maxDiff).toBeLessThan(1e-5);
    }, 240_000);
  }

  it('applies to the first mini-batch only when nothing before the update needs every row’s π_old', () => {
    const base = tinyConfig('grpo', { 'optim.miniBatchRows': 4 });
    expect(base.compute.reuseFirstMiniBatch).toBe(true);
    expect(firstMiniBatchFromUpdate(base, 10)).toBe(4);
    expect(firstMiniBatchFromUpdate(base, 3)).toBe(3);
    expect(firstMiniBatchFromUpdate(tinyConfig('grpo', { 'compute.reuseFirstMiniBatch': false }), 10)).toBe(0);
    expect(firstMiniBatchFromUpdate(tinyConfig('grpo', { 'algorithm.advantage.estimator': 'empg' }), 10)).toBe(0);
    expect(firstMiniBatchFromUpdate(tinyConfig('grpo', { 'algorithm.kl.inReward': true }), 10)).toBe(0);
    const { reuseFirstMiniBatch: _r, ...stored } = base.compute;
    expect(firstMiniBatchFromUpdate({ ...base, compute: stored as typeof base.compute }, 10)).toBe(0);
  });
});
