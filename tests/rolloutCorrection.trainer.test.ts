/**
 * Rollout correction wired into the trainer (algorithm.rolloutCorrection): decoupled IS / rejection against the
 * rollout engine's log-probs and bypass mode, on the tiny config. The mismatch here is real but small: the rollout
 * engine's forward pass (one row at a time, growing) and the trainer's (a padded batch) round differently, so
 * |log π_rollout − log π_trainer| is ~1e-7; the thresholds below sit inside that band so that some tokens and rows
 * are rejected (the int8 / fp16 rollouts of the precision setting make it larger).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import type { TrainerDeps } from '../src/core/training/types';
import { GradPool } from '../src/main/compute/gradPool';
import { deps, recorder, tinyConfig, useWasm, TEST_BACKEND } from './tinyTrainer';

beforeAll(useWasm);

/** Trainer deps with a K-worker gradient pool (compute.workers = K > 1), as tests/dataParallel.trainer.test.ts. */
function poolDeps(): TrainerDeps {
  const base = deps();
  return { ...base, compute: { ...base.compute, createGradientPool: (init) => GradPool.start({ ...init, backend: TEST_BACKEND }) } };
}

async function step(extra: Record<string, string | number | boolean>, preset = 'grpo') {
  const { hooks, rec } = recorder();
  const res = await runTraining(
    tinyConfig(preset, { 'compute.reuseFirstMiniBatch': false, ...extra }),
    extra['compute.workers'] === 2 ? poolDeps() : deps(),
    hooks,
  );
  expect(res.status).toBe('completed');
  return rec.metrics[0].values;
}

const POLICY_KEYS = ['actor/pg_loss', 'actor/grad_norm', 'actor/pg_clipfrac', 'actor/ppo_kl', 'actor/entropy', 'actor/kl_loss'];

describe('rollout correction in the trainer', () => {
  it('off: the off-policy diagnostics are logged, the IS / RS keys are NaN', async () => {
    const v = await step({});
    expect(v['mismatch/logprob_abs_max']).toBeGreaterThan(0);
    expect(Math.abs(v['rollout_corr/kl'])).toBeLessThanOrEqual(v['mismatch/logprob_abs_mean']);
    expect(Math.abs(v['rollout_corr/log_ppl_abs_diff'])).toBeLessThanOrEqual(v['mismatch/logprob_abs_max']);
    expect(v['rollout_corr/training_ppl']).toBeGreaterThan(1);
    expect(Number.isNaN(v['rollout_corr/rollout_is_mean'])).toBe(true);
    expect(Number.isNaN(v['rollout_corr/rollout_rs_masked_fraction'])).toBe(true);
  });

  it('rejection that keeps every token reproduces the uncorrected update exactly', async () => {
    const off = await step({});
    const keepAll = await step({ 'algorithm.rolloutCorrection.rs': 'token_k3', 'algorithm.rolloutCorrection.rsThreshold': '1000' });
    expect(keepAll['rollout_corr/rollout_rs_masked_fraction']).toBe(0);
    for (const k of POLICY_KEYS) expect(keepAll[k], k).toBe(off[k]);
  });

  it('decoupled TIS + token_k1 on a real mismatch: weights and rejections logged, per-option keys present', async () => {
    const v = await step({
      'algorithm.rolloutCorrection.is': 'token',
      'algorithm.rolloutCorrection.isThreshold': 1.0000001,
      'algorithm.rolloutCorrection.rs': 'token_k1',
      'algorithm.rolloutCorrection.rsThreshold': '0.9999999_1.0000001',
    });
    expect(Math.abs(v['rollout_corr/rollout_is_mean'] - 1)).toBeLessThan(1e-5);
    expect(v['rollout_corr/rollout_rs_masked_fraction']).toBeGreaterThan(0);
    expect(v['rollout_corr/rollout_rs_masked_fraction']).toBeLessThan(1);
    expect(v['rollout_corr/rollout_rs_token_k1_masked_fraction']).toBe(v['rollout_corr/rollout_rs_masked_fraction']);
    expect(Number.isFinite(v['actor/pg_loss'])).toBe(true);
    expect(Number.isFinite(v['actor/grad_norm'])).toBe(true);
  });

  it('decoupled rejection differentiated in chunks gives the unsplit update (whole-batch denominators)', async () => {
    const extra = {
      'algorithm.rolloutCorrection.is': 'sequence',
      'algorithm.rolloutCorrection.rs': 'token_k1',
      'algorithm.rolloutCorrection.rsThreshold': '0.9999999_1.0000001',
    };
    const whole = await step(extra);
    const split = await step({ ...extra, 'compute.activationBudgetMB': 1 });
    expect(whole['rollout_corr/rollout_rs_masked_fraction']).toBeGreaterThan(0.1);
    expect(whole['rollout_corr/rollout_rs_masked_fraction']).toBeLessThan(0.9);
    // float32 sums in a different order: relative 1e-5 (a denominator without the rejected tokens is off by ~30 %)
    for (const k of ['actor/pg_loss', 'actor/entropy', 'actor/kl_loss'])
      expect(Math.abs(split[k] - whole[k]), k).toBeLessThanOrEqual(Math.max(1e-5 * Math.abs(whole[k]), 1e-7));
    expect(split['actor/grad_norm']).toBeCloseTo(whole['actor/grad_norm'], 6);
  });

  it('bypass mode: no old-log-prob pass, the loss logs rollout_corr/* itself; chunked = unsplit', async () => {
    const extra = {
      'algorithm.rolloutCorrection.bypassMode': true,
      'algorithm.rolloutCorrection.lossType': 'reinforce',
      'algorithm.rolloutCorrection.is': 'token',
      'algorithm.rolloutCorrection.rs': 'token_k1',
      'algorithm.rolloutCorrection.rsThreshold': '0.9999999_1.0000001',
    };
    const whole = await step(extra);
    expect(Number.isNaN(whole['mismatch/logprob_abs_max'])).toBe(true); // π_old is the rollout's: nothing to compare
    expect(whole['rollout_corr/rollout_is_mean']).toBeGreaterThan(0);
    expect(whole['rollout_corr/rollout_rs_masked_fraction']).toBeGreaterThan(0);
    expect(Number.isFinite(whole['actor/pg_loss'])).toBe(true);
    const split = await step({ ...extra, 'compute.activationBudgetMB': 1 });
    for (const k of ['actor/pg_loss', 'actor/grad_norm']) expect(split[k], k).toBeCloseTo(whole[k], 5);
    const ppo = await step({ ...extra, 'algorithm.rolloutCorrection.lossType': 'ppo_clip' });
    expect(Number.isFinite(ppo['actor/pg_clipfrac'])).toBe(true);
    expect(ppo['rollout_corr/rollout_rs_masked_fraction']).toBeGreaterThan(0);
  });

  it('two gradient workers (compute.workers = 2) give the one-thread bypass update: the shards run the same correction', async () => {
    // The drift after the first update decides the rejections (a band far above float rounding).
    const bypass = {
      'algorithm.rolloutCorrection.bypassMode': true,
      'algorithm.rolloutCorrection.lossType': 'reinforce',
      'algorithm.rolloutCorrection.is': 'token',
      'algorithm.rolloutCorrection.rs': 'token_k1',
      'algorithm.rolloutCorrection.rsThreshold': '0.999_1.001',
      'optim.lr': 0.01,
    };
    const b1 = await step(bypass);
    const b2 = await step({ ...bypass, 'compute.workers': 2 });
    expect(b1['rollout_corr/rollout_rs_masked_fraction']).toBeGreaterThan(0);
    expect(b2['rollout_corr/rollout_rs_masked_fraction']).toBeCloseTo(b1['rollout_corr/rollout_rs_masked_fraction'], 6);
    for (const k of ['actor/pg_loss', 'actor/entropy', 'rollout_corr/rollout_is_mean'])
      expect(Math.abs(b2[k] - b1[k]), k).toBeLessThanOrEqual(Math.max(1e-5 * Math.abs(b1[k]), 1e-7));
  });
});
