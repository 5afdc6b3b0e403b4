/**
 * Gradient accumulation for batches over compute.activationBudgetMB (src/core/training/chunking.ts): the planner's
 * rules, and that a BC batch or an RL mini-batch split into chunks gives the same update as the unsplit one — for
 * every aggregation, the GSPO/CISPO/vanilla losses and sequence masking.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { planChunks, rowActivationBytes } from '../src/core/training/chunking';
import { behaviourClone } from '../src/core/training/warmstart';
import { fitEnvTokenizer } from '../src/core/training/data';
import { PolicyModel, resolveModelConfig } from '../src/core/agent/model';
import { Rng } from '../src/core/util/rng';
import { runTraining } from '../src/core/training/trainer';
import { decodeTensors } from '../src/core/training/tensorio';
import { deps, recorder, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

const NANO = { nLayers: 2, nHeads: 4, dModel: 64, dFF: 256, vocabSize: 563 };

describe('planChunks', () => {
  it('keeps a batch within the budget whole, splits one over it in order, and caps rows', () => {
    const per = rowActivationBytes(NANO, 600);
    expect(planChunks([600, 600, 600, 600], NANO, 4 * per)).toEqual([[0, 4]]);
    expect(planChunks([600, 600, 600, 600], NANO, 2 * per)).toEqual([
      [0, 2],
      [2, 4],
    ]);
    // A chunk's cost is its row count × the cost of its longest row.
    expect(planChunks([100, 100, 600, 100], NANO, 2 * per)).toEqual([
      [0, 2],
      [2, 4],
    ]);
    expect(planChunks([100, 600, 100], NANO, 2 * per)).toEqual([
      [0, 2],
      [2, 3],
    ]);
    // A single row over the budget still gets a chunk of its own.
    expect(planChunks([600, 600], NANO, 1)).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(planChunks([10, 10, 10, 10, 10], NANO, Infinity, 2)).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    expect(planChunks([], NANO, per)).toEqual([]);
  });

  it('estimates the measured wasm failure: 32 shop rows over a 2 GB budget, 16 within it', () => {
    expect(32 * rowActivationBytes(NANO, 600)).toBeGreaterThan(2048 * 2 ** 20);
    expect(16 * rowActivationBytes(NANO, 639)).toBeLessThan(2048 * 2 ** 20);
  });
});

describe("chunked gradients equal the whole batch's", () => {
  it('behaviour cloning: same loss and weights after 3 updates', async () => {
    const spec = { name: 'sokoban' as const, settings: {}, maxSteps: 15, historyWindow: 0 };
    const tok = fitEnvTokenizer(spec);
    const run = async (budgetMB: number) => {
      const model = PolicyModel.create(
        resolveModelConfig({ size: 'custom', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, maxSeqLen: 192 }, tok.size),
        new Rng(7),
      );
      const rep = await behaviourClone(
        model,
        tok,
        {
          spec,
          seed: 3,
          updates: 3,
          batchRows: 8,
          lr: 3e-3,
          optim: { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, gradClip: 1 },
          maxPrompt: 172,
          maxSeqLen: 192,
          activationBudgetMB: budgetMB,
        },
        { now: () => 0 },
      );
      const w = model.getWeights();
      model.dispose();
      return { loss: rep.finalLoss, w };
    };
    // 1 MB is below one row of this model, so every row is a chunk of its own.
    expect(rowActivationBytes({ nLayers: 1, nHeads: 2, dModel: 16, dFF: 32, vocabSize: tok.size }, 100)).toBeGreaterThan(2 ** 20);
    const whole = await run(4096);
    const split = await run(1);
    expect(split.loss).toBeCloseTo(whole.loss, 5);
    let maxDiff = 0;
    for (const [name, arr] of Object.entries(whole.w.tensors)) {
      const other = split.w.tensors[name];
      for (let i = 0; i < arr.length; i++) maxDiff = Math.max(maxDiff, Math.abs(arr[i] - other[i]));
    }
    expect(maxDiff).toBeLessThan(1e-5);
  });

  const CASES: Array<[string, string, Record<string, string | number | boolean>]> = [
    ['sampo (gspo, seq-mean-token-mean, KL, entropy)', 'sampo', {}],
    ['grpo (vanilla, token-mean)', 'grpo', {}],
    ['cispo, seq-mean-token-sum', 'cispo', { 'algorithm.aggregation': 'seq-mean-token-sum' }],
    [
      'vanilla, seq-mean-token-sum-norm, sequence masking',
      'grpo',
      {
        'algorithm.aggregation': 'seq-mean-token-sum-norm',
        'algorithm.policyLoss.seqMask.enabled': true,
        'algorithm.policyLoss.seqMask.delta': 0,
      },
    ],
  ];
  for (const [label, preset, extra] of CASES) {
    it(`RL update, ${label}: same actor metrics and weights with 1-row chunks`, async () => {
      // Two mini-batches of 4 rows: the second is off-policy, so the IS ratio, clipping and masking all act.
      const base = {
        'training.steps': 1,
        'optim.miniBatchRows': 4,
        'algorithm.filter.coldStartSteps': 1,
        'algorithm.entropyCoeff': 0.01,
        ...extra,
      };
      const a = recorder();
      const b = recorder();
      const ra = await runTraining(tinyConfig(preset, { ...base, 'compute.activationBudgetMB': 4096 }), deps(), a.hooks);
      const rb = await runTraining(tinyConfig(preset, { ...base, 'compute.activationBudgetMB': 1 }), deps(), b.hooks);
      const va = a.rec.metrics[0].values;
      const vb = b.rec.metrics[0].values;
      const actorKeys = Object.keys(va).filter((k) => k.startsWith('actor/') && Number.isFinite(va[k]));
      expect(actorKeys).toEqual(
        expect.arrayContaining(['actor/pg_loss', 'actor/grad_norm', 'actor/ppo_kl', 'actor/pg_clipfrac', 'actor/entropy']),
      );
      expect(va['actor/off_policy_step']).toBeGreaterThanOrEqual(1);
      for (const k of actorKeys) expect(vb[k], k).toBeCloseTo(va[k], 4);
      const wa = decodeTensors(ra.checkpoint.files['policy.bin']);
      const wb = decodeTensors(rb.checkpoint.files['policy.bin']);
      let maxDiff = 0;
      for (const [name, t] of Object.entries(wa)) {
        const u = wb[name];
        for (let i = 0; i < t.data.length; i++) maxDiff = Math.max(maxDiff, Math.abs(t.data[i] - u.data[i]));
      }
      expect(maxDiff).toBeLessThan(1e-4);
      expect(tf.memory().numTensors).toBeLessThan(10_000);
    });
  }
});
