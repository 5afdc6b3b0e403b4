/**
 * Bypass-mode rejection (algorithm.rolloutCorrection.bypassMode + rs) on a mini-batch differentiated whole, in
 * chunks (compute.activationBudgetMB) and on K = 2 gradient workers: the same tokens kept, so the same whole-batch
 * denominator and the same update. The rejection mask comes from the CURRENT log-probs, so the loss computes it;
 * for chunks and shards the trainer's whole-batch denominator (wholeDenominators) needs it before the loss runs.
 * Both must decide a token at a threshold alike: the behaviour log-probs are float64 (sampling.ts computes them in
 * JS numbers) while the loss reads π_rollout from a float32 tensor, so each rollout log-prob here is placed where
 * its float64 and float32 values fall on either side of log(2), the token_k1 bound. One mini-batch, one epoch: the
 * loss must still compare π_θ with π_rollout there (no on-policy shortcut in bypass mode).
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PolicyModel, resolveModelConfig, type ModelWeights } from '../src/core/agent/model';
import type { TurnRow } from '../src/core/agent/rollout';
import { rejectionMask } from '../src/core/algorithms/correction/index';
import { AdamW } from '../src/core/training/adamw';
import { actorShardGradient, type GradientPool } from '../src/core/training/shards';
import { updatePolicy, updatePolicyParallel } from '../src/core/training/trainer';
import { Rng } from '../src/core/util/rng';
import { tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

const RS = 'token_k1';
const THRESHOLD = '0.5_2.0';

/** K in-process "workers" (model copies on this thread) running the worker's own shard code. */
function inProcessPool(weights: ModelWeights, k: number): GradientPool {
  const models = Array.from({ length: k }, (_, i) => PolicyModel.fromWeights(weights, `w${i}`));
  return {
    size: k,
    setWeights: async (w) => models.forEach((m) => m.setWeights(w)),
    actor: async (shards) => shards.map((s, i) => actorShardGradient(models[i], s)),
    bc: async () => {
      throw new Error('not used');
    },
    logProbs: async () => {
      throw new Error('not used');
    },
    dispose: async () => models.forEach((m) => m.dispose()),
  };
}

/** Is a token with current log-prob `cur` and rollout log-prob `o` kept by token_k1 at 0.5_2.0? */
const kept = (cur: number, o: number): boolean => rejectionMask([[cur - o]], [[1]], RS, THRESHOLD).value[0][0] === 1;

/**
 * A float64 rollout log-prob next to cur + log 2 that token_k1 keeps and its float32 rounding rejects, or the other
 * way round (one of the two exists beside every bound: between the bound and the nearest float32 midpoint).
 */
function straddling(cur: number): number {
  for (let m = 0; m <= 4000; m++) {
    for (const o of [cur + Math.LN2 + m * 2 ** -34, cur + Math.LN2 - m * 2 ** -34]) {
      if (kept(cur, o) !== kept(cur, Math.fround(o))) return o;
    }
  }
  throw new Error(`no straddling rollout log-prob beside ${cur}`);
}

describe('bypass-mode rejection at a threshold: whole, chunked and K = 2 agree', () => {
  it('same kept tokens, same pg_loss and the same weights after the update', async () => {
    const config = tinyConfig('grpo', {
      'algorithm.rolloutCorrection.bypassMode': true,
      'algorithm.rolloutCorrection.rs': RS,
      'algorithm.rolloutCorrection.rsThreshold': THRESHOLD,
      'optim.miniBatchRows': 8,
      'optim.epochs': 1,
      'algorithm.kl.enabled': false,
    });
    const model0 = PolicyModel.create(
      resolveModelConfig({ size: 'custom', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, maxSeqLen: 64 }, 40),
      new Rng(3),
    );
    const w0 = model0.getWeights();
    const rng = new Rng(11);
    const ids = (n: number) => Array.from({ length: n }, () => 1 + Math.floor(rng.float() * 38));
    const shapes = Array.from({ length: 6 }, (_, i) => ({ promptIds: ids(4 + (i % 3)), responseIds: ids(3 + i) }));
    // The current log-probs at θ0 — the loss's, since one mini-batch × one epoch runs before any AdamW step.
    const cur = tf.tidy(() => model0.tokenLogProbs(shapes).logProbs.arraySync());
    model0.dispose();
    // Every other token straddles the bound; the rest sit well inside it (a ratio of e^0.1) or outside (e^2).
    let straddled = 0;
    const rows = shapes.map((s, i) => {
      const behaviourLogProbs = s.responseIds.map((_, j) => {
        const c = cur[i][j];
        if ((i + j) % 2 === 0) {
          straddled++;
          return straddling(c);
        }
        return c + ((i + j) % 5 === 1 ? 2 : 0.1);
      });
      return { ...s, behaviourLogProbs, uid: `u${i}`, trajUid: `t${i}` } as unknown as TurnRow;
    });
    expect(straddled).toBeGreaterThan(10);
    const adv = rows.map((_, i) => (i % 2 === 0 ? 1 : -0.7) * (1 + i / 10));
    const old = () => rows.map((r) => Array.from(r.behaviourLogProbs));
    const noStop = async (): Promise<void> => {};

    const update = async (how: 'whole' | 'chunked' | 'K=2') => {
      const cfg = {
        ...config,
        optim: { ...config.optim, miniBatchRows: 64 },
        compute: { ...config.compute, activationBudgetMB: how === 'chunked' ? 1e-6 : 4096 },
      };
      const model = PolicyModel.fromWeights(w0);
      const opt = new AdamW(model.trainableVariables(), { ...config.optim });
      const pool = how === 'K=2' ? inProcessPool(w0, 2) : null;
      const rep = pool
        ? await updatePolicyParallel(pool, model, opt, rows, old(), null, adv, cfg, false, null, noStop)
        : await updatePolicy(model, opt, rows, old(), null, adv, cfg, false, null, noStop);
      await pool?.dispose();
      const w = model.getWeights();
      model.dispose();
      opt.dispose();
      return { metrics: rep.metrics, w };
    };
    const whole = await update('whole');
    const chunked = await update('chunked');
    const k2 = await update('K=2');
    const masked = whole.metrics['rollout_corr/rollout_rs_masked_fraction'];
    // The e^2 tokens at least are rejected: π_old is the rollout's even for a single mini-batch and epoch (with the
    // on-policy shortcut π_old := sg(π_θ) the ratio was 1 and nothing was rejected).
    expect(masked).toBeGreaterThan(0);
    expect(masked).toBeLessThan(1);
    for (const other of [chunked, k2]) {
      expect(other.metrics['rollout_corr/rollout_rs_masked_fraction']).toBeCloseTo(masked, 6);
      // A denominator off by the straddling tokens scales pg_loss (2.5x here); float summation order moves it ~1e-6.
      const pg = whole.metrics['actor/pg_loss'];
      expect(Math.abs(other.metrics['actor/pg_loss'] - pg)).toBeLessThan(1e-4 * Math.abs(pg));
      let maxDiff = 0;
      for (const [name, t] of Object.entries(whole.w.tensors)) {
        const u = other.w.tensors[name];
        for (let i = 0; i < t.length; i++) maxDiff = Math.max(maxDiff, Math.abs(t[i] - u[i]));
      }
      expect(maxDiff).toBeLessThan(1e-6);
    }
  });
});
