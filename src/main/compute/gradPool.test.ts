/**
 * The data-parallel gradient pool with real worker threads on tfjs-wasm: shard gradients summed over
 * K = 2 workers equal the single-thread gradient of the whole mini-batch within float32 tolerance (the K = 1 path:
 * one tf.variableGrads, denominators from the batch itself); metric parts add up to the whole batch's metrics; old
 * log-probs per shard equal the in-process ones; a worker that throws or dies fails the call naming the worker.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyModel, resolveModelConfig, type ModelConfig } from '../../core/agent';
import { actorLoss, type ActorLossParams } from '../../core/algorithms/losses/actor-loss';
import { wholeDenominator } from '../../core/algorithms/aggregation/index';
import { pgAggregation } from '../../core/algorithms/losses/index';
import { broadcastRows, combineShards, padded, shardRanges, trainerLogProbs, type ShardRow } from '../../core/training/shards';
import { Rng } from '../../core/util/rng';
import { initBackend } from './backends';
import { GradPool } from './gradPool';

let cfg: ModelConfig;
let model: PolicyModel;
let pool: GradPool;

beforeAll(async () => {
  await initBackend('wasm');
  cfg = resolveModelConfig({ size: 'custom', dModel: 32, nLayers: 2, nHeads: 4, dFF: 64, maxSeqLen: 64 }, 30);
  model = PolicyModel.create(cfg, new Rng(3), 'pooltest');
  pool = await GradPool.start({ weights: model.getWeights(), workers: 2, backend: 'wasm' });
}, 60_000);

afterAll(async () => {
  await pool?.dispose();
  model?.dispose();
});

function randomRows(rng: Rng, n: number): ShardRow[] {
  return Array.from({ length: n }, () => ({
    promptIds: Array.from({ length: rng.range(3, 20) }, () => rng.int(cfg.vocabSize)),
    responseIds: Array.from({ length: rng.range(1, 12) }, () => rng.int(cfg.vocabSize)),
  }));
}

const PARAMS: ActorLossParams = {
  mode: 'vanilla',
  aggregation: 'token-mean',
  clipRatioLow: 0.2,
  clipRatioHigh: 0.28,
  clipRatioC: 3,
  tauPos: 1,
  tauNeg: 1.05,
  sapoPerTokenTau: false,
  seqMask: { enabled: false, delta: 0 },
  entropyCoeff: 0.01,
  kl: { enabled: true, type: 'low_var_kl', coef: 0.05 },
};

describe('shardRanges', () => {
  it('cuts n rows into ≤ K contiguous shards whose sizes differ by at most one', () => {
    expect(shardRanges(7, 2)).toEqual([
      [0, 4],
      [4, 7],
    ]);
    expect(shardRanges(9, 3)).toEqual([
      [0, 3],
      [3, 6],
      [6, 9],
    ]);
    expect(shardRanges(1, 4)).toEqual([[0, 1]]);
    expect(() => shardRanges(3, 0)).toThrow(/worker count/);
  });
});

describe('GradPool (2 worker threads, wasm)', () => {
  it('summed shard gradients equal the single-thread gradient of the whole mini-batch (random batches)', async () => {
    for (const [seed, aggregation] of [
      [1, 'token-mean'],
      [2, 'seq-mean-token-mean'],
      [3, 'seq-mean-token-sum'],
    ] as const) {
      const rng = new Rng(seed);
      const rows = randomRows(rng, 9);
      const R = Math.max(...rows.map((r) => r.responseIds.length));
      const cur = await trainerLogProbs(model, rows, 1, 2048);
      // π_old off π_θ by noise, so ratios leave 1 and some tokens clip.
      const old = cur.logProbs.map((lp) => lp.map((x) => x + (rng.float() - 0.5) * 0.6));
      const ref = cur.logProbs.map((lp) => lp.map((x) => x + (rng.float() - 0.5) * 0.2));
      const adv = rows.map(() => rng.float() * 2 - 1);
      const params = { ...PARAMS, aggregation } as ActorLossParams;

      // K = 1: the whole mini-batch in one tf.variableGrads, denominators from its own mask.
      const vars = model.trainableVariables();
      let single: Record<string, number> = {};
      const ref1 = tf.variableGrads(() => {
        const c = model.tokenLogProbs(rows, { temperature: 1 });
        const res = actorLoss(
          {
            logProb: c.logProbs,
            oldLogProb: padded(old, R),
            advantages: broadcastRows(adv, R),
            mask: c.mask,
            entropy: c.entropy,
            refLogProb: padded(ref, R),
          },
          params,
        );
        single = Object.fromEntries(Object.entries(res.metrics).map(([k, t]) => [k, (t as tf.Scalar).dataSync()[0]]));
        return res.value;
      }, vars);

      // K = 2: shards with the whole mini-batch's denominators, summed in worker order.
      const rowTok = rows.map((r) => r.responseIds.length);
      const mbTokens = rowTok.reduce((a, b) => a + b, 0);
      const shardParams = {
        ...params,
        pgDenominator: wholeDenominator(pgAggregation(params.mode, params.aggregation), rowTok, R),
        auxDenominator: wholeDenominator(params.aggregation, rowTok, R),
      };
      const parts = await pool.actor(
        shardRanges(rows.length, 2).map(([a, z]) => ({
          rows: rows.slice(a, z),
          old: old.slice(a, z),
          ref: ref.slice(a, z),
          adv: adv.slice(a, z),
          params: shardParams,
          onPolicy: false,
          temperature: 1,
          mbTokens,
          budgetMB: 2048,
        })),
      );
      expect(parts).toHaveLength(2);
      const { grads, metrics } = combineShards(vars, parts);
      let maxAbs = 0;
      let maxDiff = 0;
      for (const v of vars) {
        const a = ref1.grads[v.name].dataSync();
        const b = grads[v.name].dataSync();
        for (let i = 0; i < a.length; i++) {
          maxAbs = Math.max(maxAbs, Math.abs(a[i]));
          maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
        }
      }
      expect(maxAbs).toBeGreaterThan(1e-4);
      // float32 summation order only: differences at the level of float32 rounding of the largest entries.
      expect(maxDiff).toBeLessThan(1e-5 * Math.max(1, maxAbs));
      for (const k of ['actor/pg_loss', 'actor/entropy', 'actor/kl_loss', 'actor/pg_clipfrac', 'actor/ppo_kl']) {
        expect(metrics[k], `${aggregation} ${k}`).toBeCloseTo(single[k], 5);
      }
      expect(single['actor/pg_clipfrac']).toBeGreaterThan(0);
      tf.dispose([...Object.values(grads), ...Object.values(ref1.grads), ref1.value]);
    }
  }, 60_000);

  it('per-shard old log-probs equal the in-process ones, and a weight update reaches every worker', async () => {
    const rows = randomRows(new Rng(9), 7);
    const here = await trainerLogProbs(model, rows, 1, 2048);
    const outs = await pool.logProbs(
      shardRanges(rows.length, 2).map(([a, z]) => ({ rows: rows.slice(a, z), temperature: 1, budgetMB: 2048 })),
    );
    const there = outs.flatMap((o) => o.logProbs);
    there.forEach((lp, i) => lp.forEach((x, j) => expect(x).toBeCloseTo(here.logProbs[i][j], 5)));
    // New weights: the workers answer for them, not for the old ones.
    const other = PolicyModel.create(cfg, new Rng(77), 'pooltest_other');
    await pool.setWeights(other.getWeights());
    const moved = (await pool.logProbs([{ rows, temperature: 1, budgetMB: 2048 }]))[0].logProbs;
    const want = (await trainerLogProbs(other, rows, 1, 2048)).logProbs;
    moved.forEach((lp, i) => lp.forEach((x, j) => expect(x).toBeCloseTo(want[i][j], 5)));
    expect(moved[0][0]).not.toBeCloseTo(here.logProbs[0][0], 3);
    await pool.setWeights(model.getWeights());
    other.dispose();
  }, 60_000);
});

describe('GradPool faults', () => {
  it('a worker that throws fails the call naming the worker; the others finish and the pool still answers', async () => {
    const good = randomRows(new Rng(4), 2);
    const bad: ShardRow[] = [{ promptIds: [1, 2], responseIds: [cfg.vocabSize + 5] }];
    await expect(
      pool.logProbs([
        { rows: good, temperature: 1, budgetMB: 2048 },
        { rows: bad, temperature: 1, budgetMB: 2048 },
      ]),
    ).rejects.toThrow(/gradient worker 1: tokenLogProbs: row 0 has token id/);
    const again = await pool.logProbs([
      { rows: good, temperature: 1, budgetMB: 2048 },
      { rows: good, temperature: 1, budgetMB: 2048 },
    ]);
    expect(again[1].logProbs).toEqual(again[0].logProbs);
  }, 60_000);

  it('a worker that dies mid-call fails it (no hang) naming the worker, and the pool refuses further work', async () => {
    const rows = randomRows(new Rng(5), 40);
    const call = pool.logProbs(shardRanges(rows.length, 2).map(([a, z]) => ({ rows: rows.slice(a, z), temperature: 1, budgetMB: 2048 })));
    await pool.kill(1);
    await expect(call).rejects.toThrow(/gradient worker 1 exited/);
    await expect(pool.setWeights(model.getWeights())).rejects.toThrow(/gradient pool is unusable.*worker 1 exited/);
    await expect(pool.logProbs([{ rows, temperature: 1, budgetMB: 2048 }])).rejects.toThrow(/unusable/);
  }, 60_000);
});
