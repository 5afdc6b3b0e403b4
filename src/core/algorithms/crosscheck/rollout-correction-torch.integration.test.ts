/**
 * Rollout correction vs an independent float64 PyTorch implementation of verl's definitions (torch_reference.py:
 * rollout_correction, policy_loss_bypass_mode, icepop_function, the pipeline with IcePop as its IS level, alone
 * and chained with rejection, and decoupled mode's vanilla loss over the rejection mask), number for number:
 * weights, masks, every rollout_corr/* metric (IcePop's too), the bypass and decoupled losses and their gradients,
 * aggregated as verl's current agg_loss (b178a3c) aggregates: the seq-mean modes over the rows with a kept token.
 * Random cases with padded tokens, fully padded rows, rows and whole batches rejected, and log-ratios beyond the
 * ±20 clamp. Where every token is rejected verl's loss is 0 / 0 = NaN and the lab's 0, a documented difference the
 * test checks as such. Needs Debian's /usr/bin/python3 with python3-torch (DEVELOPERS.md "PyTorch peer"); without
 * it the test fails and says how to install it.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROLLOUT_RS_OPTIONS } from '../../../shared/metrics';
import { Rng } from '../../util/rng';
import { rolloutCorrection } from '../correction/index';
import { POLICY_LOSSES } from '../losses/index';
import type { AggregationName } from '../aggregation/index';
import { runProbe } from '../probe';
import { setupTf } from '../test-helpers';

const script = fileURLToPath(new URL('./torch_reference.py', import.meta.url));
const PY = '/usr/bin/python3';

beforeAll(setupTf);

type Case = { fn: string; params: Record<string, unknown>; inputs: Record<string, unknown> };

/** torch_reference.py's name for verl's pipeline with IcePop's weights (no probe function: verl has no IcePop). */
const ICEPOP_PIPELINE = 'icepop_correction';

function icepopPipeline(c: Case): { outputs: Record<string, unknown> } {
  const x = c.inputs as Record<string, number[][]>;
  const p = c.params as {
    rollout_is_threshold: number;
    rollout_is_threshold_lower: number;
    rollout_rs: string | null;
    rollout_rs_threshold: string | null;
  };
  const r = rolloutCorrection(x.old_log_prob, x.rollout_log_prob, x.response_mask, {
    rolloutIs: 'icepop',
    rolloutIsThreshold: p.rollout_is_threshold,
    rolloutIsThresholdLower: p.rollout_is_threshold_lower,
    rolloutIsBatchNormalize: false,
    rolloutRs: p.rollout_rs,
    rolloutRsThreshold: p.rollout_rs_threshold,
  });
  return { outputs: { rollout_is_weights: r.weights, modified_response_mask: r.mask, metrics: r.metrics } };
}

/** torch_reference.py's decoupled mode: verl's pipeline on π_old vs π_rollout, then its vanilla loss (no probe function). */
const DECOUPLED = 'decoupled_policy_loss';

function decoupledLoss(c: Case): { outputs: Record<string, unknown> } {
  const x = c.inputs as Record<string, number[][]>;
  const p = c.params as {
    loss_agg_mode: AggregationName;
    clip_ratio_low: number;
    clip_ratio_high: number;
    rollout_is: 'token' | 'sequence' | null;
    rollout_rs: string | null;
    rollout_rs_threshold: string | number | null;
  };
  const r = rolloutCorrection(x.old_log_prob, x.rollout_log_prob, x.response_mask, {
    rolloutIs: p.rollout_is,
    rolloutIsThreshold: 2,
    rolloutIsThresholdLower: 0,
    rolloutIsBatchNormalize: false,
    rolloutRs: p.rollout_rs,
    rolloutRsThreshold: p.rollout_rs_threshold,
  });
  const params = {
    aggregation: p.loss_agg_mode,
    clipRatioLow: p.clip_ratio_low,
    clipRatioHigh: p.clip_ratio_high,
    clipRatioC: 3,
    tauPos: 1,
    tauNeg: 1.05,
    sapoPerTokenTau: false,
    seqMask: { enabled: false, delta: 0 },
  };
  return tf.tidy(() => {
    const { value, grad } = tf.valueAndGrad(
      (lp: tf.Tensor) =>
        POLICY_LOSSES.get('vanilla').fn(
          {
            logProb: lp as tf.Tensor2D,
            oldLogProb: tf.tensor2d(x.old_log_prob),
            advantages: tf.tensor2d(x.advantages),
            mask: tf.tensor2d(r.mask),
            rolloutIsWeights: r.weights ? tf.tensor2d(r.weights) : undefined,
          },
          params,
        ).value,
    )(tf.tensor2d(x.log_prob));
    return { outputs: { pg_loss: value.dataSync()[0], modified_response_mask: r.mask, grad_log_prob: grad.arraySync() } };
  });
}

function cases(): Case[] {
  const rng = new Rng(20251204);
  const u = (a: number, b: number) => a + (b - a) * rng.float();
  const mat = (N: number, T: number, f: (r: number, t: number) => number) =>
    Array.from({ length: N }, (_, r) => Array.from({ length: T }, (_, t) => f(r, t)));
  const out: Case[] = [];
  const thresholds: Record<string, string> = { k1: '0.6_1.8', k2: '0.08', k3: '0.05' };
  for (let k = 0; k < 8; k++) {
    const N = 5;
    const T = 6;
    // Row 4 is fully padded in even cases; other rows lose 0–2 trailing tokens.
    const mask = mat(N, T, (r, t) => (r === 4 && k % 2 === 0 ? 0 : t < T - ((r + k) % 3) ? 1 : 0));
    const roll = mat(N, T, () => u(-3, -0.05));
    const spread = k === 7 ? 12 : k === 6 ? 0.05 : 0.6; // beyond the ±20 clamp on row sums; near-on-policy
    const old = roll.map((row) => row.map((v) => v + u(-spread, spread)));
    const lp = old.map((row) => row.map((v) => v + u(-0.3, 0.3)));
    const adv = Array.from({ length: N }, () => u(-2, 2));
    const inputs = { old_log_prob: old, rollout_log_prob: roll, response_mask: mask };
    for (const isLevel of [null, 'token', 'sequence']) {
      for (const norm of [false, true]) {
        out.push({
          fn: 'rollout_correction',
          params: { rollout_is: isLevel, rollout_is_threshold: k % 3 === 0 ? 1.5 : 2.0, rollout_is_batch_normalize: norm },
          inputs,
        });
      }
    }
    for (const o of ROLLOUT_RS_OPTIONS) {
      out.push({ fn: 'rollout_correction', params: { rollout_rs: o, rollout_rs_threshold: thresholds[o.slice(-2)] }, inputs });
    }
    out.push({ fn: 'rollout_correction', params: { rollout_rs: 'token_k1', rollout_rs_threshold: 1.5 }, inputs });
    out.push({
      fn: 'rollout_correction',
      params: { rollout_is: 'token', rollout_rs: 'token_k1,seq_mean_k3,seq_max_k2', rollout_rs_threshold: '0.5_2.0,0.04,0.2' },
      inputs,
    });
    out.push({
      fn: 'rollout_correction',
      params: { rollout_is: 'sequence', rollout_is_threshold: 3, rollout_rs: 'seq_sum_k1, seq_sum_k2', rollout_rs_threshold: '0.3_3,0.5' },
      inputs,
    });
    const lossInputs = { old_log_prob: roll, log_prob: lp, advantages: adv, response_mask: mask };
    for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm']) {
      out.push({
        fn: 'policy_loss_bypass_mode',
        params: {
          loss_type: 'ppo_clip',
          loss_agg_mode: agg,
          clip_ratio_low: 0.2,
          clip_ratio_high: 0.28,
          rollout_is: 'token',
          rollout_rs: 'token_k1',
          rollout_rs_threshold: '0.7_1.4',
        },
        inputs: lossInputs,
      });
      out.push({
        fn: 'policy_loss_bypass_mode',
        params: {
          loss_type: 'reinforce',
          loss_agg_mode: agg,
          rollout_is: k % 2 ? 'sequence' : 'token',
          rollout_is_threshold: 2,
          rollout_is_batch_normalize: k % 3 === 1,
          rollout_rs: 'seq_mean_k3',
          rollout_rs_threshold: 0.05,
        },
        inputs: lossInputs,
      });
      out.push({ fn: 'policy_loss_bypass_mode', params: { loss_type: 'reinforce', loss_agg_mode: agg }, inputs: lossInputs });
      // Whole rows rejected (sequence-level options): the seq-mean modes divide by the rows with a kept token.
      for (const loss_type of ['ppo_clip', 'reinforce'])
        out.push({
          fn: 'policy_loss_bypass_mode',
          params: {
            loss_type,
            loss_agg_mode: agg,
            rollout_is: 'sequence',
            rollout_rs: k % 2 ? 'seq_mean_k1' : 'seq_max_k2',
            rollout_rs_threshold: k % 2 ? '0.9_1.1' : 0.02,
          },
          inputs: lossInputs,
        });
      // Every token rejected: verl's loss 0 / 0 = NaN (token-mean, seq-mean-*), the lab's 0; the gradient 0 in both.
      out.push({
        fn: 'policy_loss_bypass_mode',
        params: {
          loss_type: k % 2 ? 'ppo_clip' : 'reinforce',
          loss_agg_mode: agg,
          rollout_rs: 'token_k1',
          rollout_rs_threshold: '0.999_1.001',
        },
        inputs: lossInputs,
      });
      // Decoupled mode: the rejection mask (π_old vs π_rollout) replaces the response mask, IS weights on the tokens.
      const advMat = adv.map((a) => new Array<number>(T).fill(a));
      const decoupledInputs = { old_log_prob: old, rollout_log_prob: roll, log_prob: lp, advantages: advMat, response_mask: mask };
      for (const [rs, thr] of [
        ['seq_mean_k1', '0.7_1.4'],
        ['token_k1,seq_max_k2', '0.6_1.8,0.3'],
        ['token_k1', '0.999_1.001'],
      ] as const)
        out.push({
          fn: DECOUPLED,
          params: {
            loss_agg_mode: agg,
            clip_ratio_low: 0.2,
            clip_ratio_high: 0.28,
            rollout_is: k % 2 ? 'token' : 'sequence',
            rollout_rs: rs,
            rollout_rs_threshold: thr,
          },
          inputs: decoupledInputs,
        });
    }
    out.push({
      fn: 'icepop_function',
      params: { tis_clip_low: 0.7, tis_clip: 1.4 },
      inputs: { train_log_probs: old, rollout_log_probs: roll, loss_masks: mask },
    });
    // IcePop as the pipeline's IS level (rollout_is=icepop, the lab's fifth-dimension catalog), alone and chained with
    // rejection options: weights, mask and every metric. verl has no IcePop, so the probe refuses it; the test calls
    // the pipeline itself (ICEPOP_PIPELINE).
    for (const rs of [null, 'token_k1,seq_mean_k3'])
      out.push({
        fn: ICEPOP_PIPELINE,
        params: {
          rollout_is_threshold: 1.4,
          rollout_is_threshold_lower: 0.7,
          rollout_rs: rs,
          rollout_rs_threshold: rs ? '0.5_2.0,0.04' : null,
        },
        inputs,
      });
  }
  return out;
}

interface Diff {
  worstAbs: number;
  worstRel: number;
  bad: string[];
  /** Where torch (verl) gives NaN and the probe 0: a loss with no token left, the lab's documented 0. */
  nanVsZero: string[];
}

function compare(got: unknown, want: unknown, where: string, tol: { rel: number; abs: number }, d: Diff): void {
  if (want === null) {
    if (got !== null) d.bad.push(`${where}: probe ${JSON.stringify(got)?.slice(0, 40)}, torch null`);
    return;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) {
      d.bad.push(`${where}: shape differs`);
      return;
    }
    want.forEach((w, i) => compare(got[i], w, `${where}[${i}]`, tol, d));
    return;
  }
  if (typeof want === 'object') {
    const g = (got ?? {}) as Record<string, unknown>;
    const extra = Object.keys(g).filter((k) => !(k in (want as object)) && where.endsWith('metrics'));
    if (extra.length > 0) d.bad.push(`${where}: probe has keys torch lacks: ${extra.join(', ')}`);
    for (const [k, w] of Object.entries(want as Record<string, unknown>)) compare(g[k], w, `${where}.${k}`, tol, d);
    return;
  }
  const g = got as number;
  if (want === 'NaN') {
    if (g === 0) d.nanVsZero.push(where);
    else d.bad.push(`${where}: probe ${g}, torch NaN (verl's 0 / 0; the lab's should be 0)`);
    return;
  }
  const w = want as number;
  const delta = Math.abs(g - w);
  const scale = Math.max(Math.abs(g), Math.abs(w));
  if (Number.isFinite(delta) && !where.endsWith('_std')) {
    d.worstAbs = Math.max(d.worstAbs, delta);
    d.worstRel = Math.max(d.worstRel, scale > 0 ? delta / scale : 0);
  }
  // verl's std metrics are sqrt(max(E[x²] − E[x]², 0)) of clamped values: when the clamp makes them (nearly) all
  // equal the result is the square root of summation rounding (≈ 1e-6 here), which differs with summation order.
  const abs = where.endsWith('_std') ? Math.max(tol.abs, 1e-5) : tol.abs;
  if (!(delta <= Math.max(abs, tol.rel * scale))) d.bad.push(`${where}: probe ${g}, torch ${w}`);
}

describe("rollout correction vs an independent float64 PyTorch implementation of verl's definitions", () => {
  it('agrees on weights, masks, every rollout_corr/* metric, the bypass loss and its gradient', () => {
    const hasTorch = spawnSync(PY, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;
    expect(hasTorch, `${PY} cannot import torch: install Debian's python3-torch (apt-get install python3-torch)`).toBe(true);
    const all = cases();
    const py = spawnSync(PY, [script], {
      input: JSON.stringify(all),
      encoding: 'utf8',
      timeout: 120_000,
      env: { PATH: '/usr/bin:/bin', OMP_NUM_THREADS: '1' },
    });
    expect(py.status, py.stderr).toBe(0);
    const want = JSON.parse(py.stdout) as Array<{ outputs: Record<string, unknown> }>;
    const byFn = new Map<string, Diff>();
    all.forEach((c, i) => {
      const d = byFn.get(c.fn) ?? { worstAbs: 0, worstRel: 0, bad: [], nanVsZero: [] };
      // rollout_correction and icepop are float64 on both sides; the bypass and decoupled losses run in float32
      // tfjs, and their metrics come from float32 log-probs (the same tolerance as the policy-loss cross-check,
      // algo-torch.test.ts).
      const float32 = c.fn === 'policy_loss_bypass_mode' || c.fn === DECOUPLED;
      const tol = float32 ? { rel: 1e-5, abs: 1e-6 } : { rel: 1e-10, abs: 1e-12 };
      const got = c.fn === ICEPOP_PIPELINE ? icepopPipeline(c) : c.fn === DECOUPLED ? decoupledLoss(c) : runProbe(c);
      compare(got.outputs, want[i].outputs, `case ${i} ${c.fn}`, tol, d);
      byFn.set(c.fn, d);
    });
    for (const [fn, d] of byFn)
      console.log(
        `[crosscheck] ${fn}: max |Δ| = ${d.worstAbs.toExponential(2)}, max relative Δ = ${d.worstRel.toExponential(2)} (std metrics aside)` +
          (d.nanVsZero.length > 0 ? `; ${d.nanVsZero.length} losses NaN in verl, 0 in the lab (every token rejected)` : ''),
      );
    expect([...byFn.values()].flatMap((d) => d.bad).slice(0, 10)).toEqual([]);
    // NaN against 0 only for a loss, and only where every token was rejected (the cases made for it are there).
    const nanVsZero = [...byFn.values()].flatMap((d) => d.nanVsZero);
    expect(nanVsZero.filter((w) => !w.endsWith('.pg_loss'))).toEqual([]);
    for (const fn of ['policy_loss_bypass_mode', DECOUPLED]) expect(byFn.get(fn)?.nanVsZero.length, fn).toBeGreaterThan(0);
    expect(all.length).toBeGreaterThan(200);
  });
});
