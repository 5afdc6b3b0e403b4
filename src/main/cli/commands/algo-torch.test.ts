/**
 * Cross-check of the algo probe against an independent float64 PyTorch implementation
 * (src/core/algorithms/crosscheck/torch_reference.py) on random cases: values, metrics and gradients must
 * agree to ~1e-5 relative. Needs Debian's /usr/bin/python3 with python3-torch (DEVELOPERS.md "PyTorch
 * peer"); without it the test is reported as skipped, not passed.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runProbe } from '../../../core/algorithms/probe';
import { setupTf } from '../../../core/algorithms/test-helpers';
import { Rng } from '../../../core/util/rng';

const script = fileURLToPath(new URL('../../../core/algorithms/crosscheck/torch_reference.py', import.meta.url));
const PY = '/usr/bin/python3';
const hasTorch = spawnSync(PY, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;

beforeAll(setupTf);

function cases(): unknown[] {
  const rng = new Rng(20260225);
  const u = (a: number, b: number) => a + (b - a) * rng.float();
  const mat = (N: number, T: number, f: (r: number, t: number) => number) =>
    Array.from({ length: N }, (_, r) => Array.from({ length: T }, (_, t) => f(r, t)));
  const out: unknown[] = [];
  for (let k = 0; k < 6; k++) {
    const N = 4;
    const T = 5;
    const mask = mat(N, T, (r, t) => (r === 3 && k % 2 === 0 ? 0 : t < T - ((r + k) % 3) ? 1 : 0));
    const old = mat(N, T, () => u(-3, -0.1));
    const spread = k === 5 ? 30 : 0.5; // one case with extreme log-ratios
    const lp = old.map((row) => row.map((v) => v + u(-spread, spread)));
    const advRow = Array.from({ length: N }, () => u(-2, 2));
    const adv = advRow.map((a) => new Array<number>(T).fill(a));
    const inputs = { old_log_prob: old, log_prob: lp, advantages: adv, response_mask: mask };
    for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm']) {
      out.push({ fn: 'policy_loss_vanilla', params: { loss_agg_mode: agg, clip_ratio_low: 0.2, clip_ratio_high: 0.28 }, inputs });
      out.push({
        fn: 'policy_loss_cispo',
        params: { loss_agg_mode: agg, clip_ratio_low: 1.0, clip_ratio_high: 0.2, use_seq_mask: k % 2 === 1, seq_mask_delta: 0.05 },
        inputs,
      });
      out.push({
        fn: 'policy_loss_sapo',
        params: { loss_agg_mode: agg, tau_pos: 1.0, tau_neg: 1.05, use_seq_mask: k % 2 === 0, seq_mask_delta: 0.003 },
        inputs,
      });
      out.push({ fn: 'agg_loss', params: { loss_agg_mode: agg }, inputs: { loss_mat: lp, loss_mask: mask } });
    }
    // SAPO with per-token advantages whose signs differ from the row mean (the clip-fraction diagnostic
    // judges each token by its own sign), with and without sequence masking, both τ rules.
    const tokAdv = advRow.map((a) => Array.from({ length: T }, () => a + u(-2.5, 2.5)));
    const tokInputs = { ...inputs, advantages: tokAdv };
    for (const useSeqMask of [false, true]) {
      out.push({
        fn: 'policy_loss_sapo',
        params: { loss_agg_mode: 'token-mean', clip_ratio: 0.1, use_seq_mask: useSeqMask, seq_mask_delta: 0.01 },
        inputs: tokInputs,
      });
    }
    out.push({ fn: 'policy_loss_gspo', params: { clip_ratio_low: 0.03, clip_ratio_high: 0.04 }, inputs });
    out.push({ fn: 'policy_loss_vanilla', params: { use_seq_mask: true, seq_mask_delta: 0.003 }, inputs });
    for (const t of ['kl', 'abs', 'mse', 'low_var_kl']) {
      out.push({
        fn: 'kl_penalty',
        params: { kl_penalty: t, loss_agg_mode: k % 2 ? 'token-mean' : 'seq-mean-token-mean' },
        inputs: { log_prob: lp, ref_log_prob: old, response_mask: mask },
      });
    }
    out.push({
      fn: 'entropy',
      params: {},
      inputs: { logits: mat(N, T, () => 0).map((row) => row.map(() => Array.from({ length: 6 }, () => u(-3, 3)))), response_mask: mask },
    });
    const uid = ['a', 'a', 'a', 'b', 'b', 'c'];
    const rewards = mat(6, 3, (_, t) => (t === 2 ? Math.round(u(0, 2)) : 0));
    const traj = ['t1', 't1', 't2', 't3', 't3', 't4'];
    // an invalid later turn of t1 (row 1) and of t3 (row 4): their trajectories' mean scores drop
    const penalised = rewards.map((r, i) => (i === 1 || i === 4 ? [r[0], r[1], r[2] - 0.1] : r));
    out.push({
      fn: 'compute_grpo_outcome_advantage',
      params: { norm_adv_by_std_in_grpo: k % 2 === 0 },
      inputs: { token_level_rewards: rewards, response_mask: mat(6, 3, () => 1), uid },
    });
    out.push({
      fn: 'compute_grpo_outcome_advantage',
      params: { compute_mean_std_cross_steps: false },
      inputs: { token_level_rewards: penalised, response_mask: mat(6, 3, () => 1), uid, traj_uid: traj },
    });
    out.push({
      fn: 'compute_gigpo_outcome_advantage',
      params: { mode: k % 2 ? 'mean_norm' : 'mean_std_norm', step_advantage_w: 1.0 },
      inputs: {
        token_level_rewards: rewards,
        step_rewards: Array.from({ length: 6 }, () => u(-1, 1)),
        response_mask: mat(6, 3, () => 1),
        anchor_obs: ['s0', 's1', 's0', 's0', 's2', 's0'],
        uid,
        traj_uid: ['t1', 't1', 't2', 't3', 't3', 't4'],
      },
    });
  }
  // A fully masked batch: 0 in every mode (verl's agg_loss: 0 / 0 = NaN but for seq-mean-token-sum-norm), zero gradients.
  const zeros = mat(2, 3, () => 0);
  const allMasked = {
    old_log_prob: mat(2, 3, () => -1),
    log_prob: mat(2, 3, () => u(-2, 0)),
    advantages: mat(2, 3, () => 1),
    response_mask: zeros,
  };
  for (const agg of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm']) {
    for (const fn of ['policy_loss_vanilla', 'policy_loss_cispo', 'policy_loss_sapo', 'policy_loss_gspo'])
      out.push({ fn, params: { loss_agg_mode: agg }, inputs: allMasked });
  }
  return out;
}

function compare(got: unknown, want: unknown, where: string, bad: string[], nanVsZero: string[]): void {
  if (Array.isArray(want)) {
    (want as unknown[]).forEach((w, i) => compare((got as unknown[])[i], w, `${where}[${i}]`, bad, nanVsZero));
    return;
  }
  if (typeof want === 'object' && want !== null) {
    for (const [k, w] of Object.entries(want)) compare((got as Record<string, unknown>)[k], w, `${where}.${k}`, bad, nanVsZero);
    return;
  }
  const g = got as number;
  // verl's agg_loss with no token in the mask: 0 / 0 = NaN (torch_reference.py sends it as "NaN"); the lab's 0.
  if (want === 'NaN') {
    if (g === 0) nanVsZero.push(where);
    else bad.push(`${where}: probe ${g}, torch NaN (the lab's should be 0)`);
    return;
  }
  const w = want as number;
  if (!(Math.abs(g - w) <= Math.max(1e-6, 1e-5 * Math.max(Math.abs(g), Math.abs(w))))) bad.push(`${where}: probe ${g}, torch ${w}`);
}

describe('algo probe vs an independent float64 PyTorch implementation', () => {
  it.skipIf(!hasTorch)('agrees on every value, metric and gradient (~1e-5 relative)', () => {
    const all = cases();
    const py = spawnSync(PY, [script], {
      input: JSON.stringify(all),
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, OMP_NUM_THREADS: '1' },
    });
    expect(py.status, py.stderr).toBe(0);
    const want = JSON.parse(py.stdout) as Array<{ outputs: Record<string, unknown> }>;
    const bad: string[] = [];
    const nanVsZero: string[] = [];
    all.forEach((c, i) => compare(runProbe(c).outputs, want[i].outputs, `case ${i} ${(c as { fn: string }).fn}`, bad, nanVsZero));
    expect(bad.slice(0, 10)).toEqual([]);
    // only a loss is NaN in verl, and the fully masked batches above make some
    expect(nanVsZero.filter((w) => !/\.(pg_loss|loss|kl_loss|entropy_loss)$/.test(w))).toEqual([]);
    expect(nanVsZero.length).toBeGreaterThanOrEqual(12);
    expect(all.length).toBeGreaterThan(100);
  });
});
