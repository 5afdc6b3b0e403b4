/**
 * The data-parallel worker's shard gradient (shards.ts actorShardGradient) applies decoupled rollout correction:
 * its IS weights and keep mask give the same loss and metrics as actorLoss on the corrected batch, and the shards
 * of a batch add up to the whole batch. Direct calls on one thread: no worker pool needed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PolicyModel, resolveModelConfig } from '../src/core/agent/model';
import { wholeDenominator } from '../src/core/algorithms/aggregation/index';
import { actorShardGradient, type ActorShard, type ShardRow } from '../src/core/training/shards';
import { Rng } from '../src/core/util/rng';
import { useWasm } from './tinyTrainer';

beforeAll(useWasm);

describe('actorShardGradient with rollout correction', () => {
  it('IS weights and rejected tokens change the shard loss; two shards sum to the whole batch', () => {
    const model = PolicyModel.create(
      resolveModelConfig({ size: 'custom', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, maxSeqLen: 64 }, 40),
      new Rng(3),
    );
    const rng = new Rng(11);
    const rows: ShardRow[] = Array.from({ length: 4 }, (_, i) => ({
      promptIds: Array.from({ length: 5 }, () => 1 + Math.floor(rng.float() * 38)),
      responseIds: Array.from({ length: 3 + i }, () => 1 + Math.floor(rng.float() * 38)),
    }));
    const old = rows.map((r) => r.responseIds.map(() => -3 - rng.float()));
    const adv = [1, -0.5, 0.7, -1.2];
    const isWeights = rows.map((r) => r.responseIds.map(() => 0.5 + rng.float()));
    const keep = rows.map((r, i) => r.responseIds.map((_, j) => (i === 1 || j === 0 ? 0 : 1)));
    const kept = keep.map((k) => k.reduce<number>((a, b) => a + b, 0));
    const width = Math.max(...rows.map((r) => r.responseIds.length));
    const params = {
      mode: 'vanilla' as const,
      aggregation: 'token-mean' as const,
      clipRatioLow: 0.2,
      clipRatioHigh: 0.2,
      clipRatioC: 3,
      tauPos: 1,
      tauNeg: 1.05,
      sapoPerTokenTau: false,
      seqMask: { enabled: false, delta: 0.2 },
      entropyCoeff: 0.001,
      kl: { enabled: false, type: 'low_var_kl' as const, coef: 0 },
      pgDenominator: wholeDenominator('token-mean', kept, width),
      auxDenominator: wholeDenominator('token-mean', kept, width),
    };
    const mbTokens = rows.reduce((s, r) => s + r.responseIds.length, 0);
    const shard = (lo: number, hi: number, corr: boolean): ActorShard => ({
      rows: rows.slice(lo, hi),
      old: old.slice(lo, hi),
      ref: null,
      adv: adv.slice(lo, hi),
      params,
      onPolicy: false,
      temperature: 1,
      mbTokens,
      budgetMB: 2048,
      ...(corr ? { isWeights: isWeights.slice(lo, hi), keep: keep.slice(lo, hi) } : {}),
    });
    const whole = actorShardGradient(model, shard(0, 4, true));
    const plain = actorShardGradient(model, shard(0, 4, false));
    expect(whole.metrics['actor/pg_loss']).not.toBeCloseTo(plain.metrics['actor/pg_loss'], 3);
    const a = actorShardGradient(model, shard(0, 2, true));
    const b = actorShardGradient(model, shard(2, 4, true));
    for (const k of ['actor/pg_loss', 'actor/entropy']) expect(a.metrics[k] + b.metrics[k], k).toBeCloseTo(whole.metrics[k], 5);
    // Row 1 is rejected whole: its shard's policy-loss part comes from row 0's kept tokens only.
    const row1Only = actorShardGradient(model, shard(1, 2, true));
    expect(row1Only.metrics['actor/pg_loss']).toBe(0);
    expect(row1Only.metrics['actor/entropy']).toBe(0);
    model.dispose();
  });
});
