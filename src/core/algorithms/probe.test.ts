import { beforeAll, describe, expect, it } from 'vitest';
import { cispo64, gspo64, sapo64, vanilla64, type Case } from './losses/reference64';
import { ProbeInputError, runProbe, runProbeText } from './probe';
import { expectMatrixClose, setupTf } from './test-helpers';

beforeAll(setupTf);

const lossInputs = {
  old_log_prob: [
    [-1.0, -1.2, -0.3],
    [-0.5, -2.0, -1.0],
  ],
  log_prob: [
    [-0.8, -1.25, -0.35],
    [-0.9, -1.9, -1.0],
  ],
  advantages: [
    [0.7, 0.7, 0.7],
    [-1.3, -1.3, -1.3],
  ],
  response_mask: [
    [1, 1, 1],
    [1, 1, 0],
  ],
};
const asCase: Case = {
  oldLogProb: lossInputs.old_log_prob,
  logProb: lossInputs.log_prob,
  adv: lossInputs.advantages,
  mask: lossInputs.response_mask,
};

function out(fn: string, params: Record<string, unknown>, inputs: Record<string, unknown>) {
  return runProbe({ fn, params, inputs }).outputs as Record<string, any>;
}

describe('algo probe: outputs agree with the float64 reference (~1e-5 relative)', () => {
  const base = { lo: 0.2, hi: 0.2, c: 3, tauPos: 1, tauNeg: 1.05 };
  const cases: Array<[string, Record<string, unknown>, { value: number; grad: number[][] }]> = [
    ['policy_loss_vanilla', { clip_ratio: 0.2, loss_agg_mode: 'token-mean' }, vanilla64(asCase, { ...base, agg: 'token-mean' })],
    [
      'policy_loss_cispo',
      { clip_ratio_low: 1.0, clip_ratio_high: 0.2, loss_agg_mode: 'seq-mean-token-mean' },
      cispo64(asCase, { ...base, lo: 1.0, agg: 'seq-mean-token-mean' }),
    ],
    ['policy_loss_sapo', { tau_pos: 1.0, tau_neg: 1.05, loss_agg_mode: 'token-mean' }, sapo64(asCase, { ...base, agg: 'token-mean' })],
    [
      'policy_loss_gspo',
      { clip_ratio_low: 0.003, clip_ratio_high: 0.004, loss_agg_mode: 'token-mean' },
      gspo64(asCase, { ...base, lo: 0.003, hi: 0.004, agg: 'seq-mean-token-mean' }),
    ],
  ];
  for (const [fn, params, want] of cases) {
    it(fn, () => {
      const o = out(fn, params, lossInputs);
      expect(Math.abs(o.pg_loss - want.value)).toBeLessThanOrEqual(Math.max(1e-6, 1e-5 * Math.abs(want.value)));
      expectMatrixClose(o.grad_log_prob, want.grad, 1e-5, 1e-7);
      for (const k of ['pg_clipfrac', 'ppo_kl', 'pg_clipfrac_lower', 'num_masked_seqs']) expect(typeof o[k], k).toBe('number');
    });
  }

  it('agg_loss returns loss and grad_loss_mat', () => {
    const o = out(
      'agg_loss',
      { loss_agg_mode: 'seq-mean-token-mean' },
      {
        loss_mat: [
          [1, 2],
          [3, 4],
        ],
        loss_mask: [
          [1, 1],
          [1, 0],
        ],
      },
    );
    expect(o.loss).toBeCloseTo((1.5 + 3) / 2, 6);
    expectMatrixClose(o.grad_loss_mat, [
      [0.25, 0.25],
      [0.5, 0],
    ]);
  });

  it('kl_penalty and entropy', () => {
    const k = out(
      'kl_penalty',
      { kl_penalty: 'low_var_kl' },
      { log_prob: [[-1, -2]], ref_log_prob: [[-1.5, -2]], response_mask: [[1, 1]] },
    );
    expect(k.kld[0][0]).toBeCloseTo(Math.exp(-0.5) + 0.5 - 1, 6);
    expect(k.kl_loss).toBeCloseTo((Math.exp(-0.5) + 0.5 - 1) / 2, 6);
    expect(k.grad_log_prob[0][0]).toBeCloseTo((1 - Math.exp(-0.5)) / 2, 6);
    const e = out(
      'entropy',
      {},
      {
        logits: [
          [
            [0, 0, 0, 0],
            [1, 1, 1, 1],
          ],
        ],
        response_mask: [[1, 0]],
      },
    );
    expect(e.entropy[0][0]).toBeCloseTo(Math.log(4), 6);
    expect(e.entropy_loss).toBeCloseTo(Math.log(4), 6);
    expect(e.grad_logits[0][1]).toEqual([0, 0, 0, 0]);
  });

  it('GRPO and GiGPO advantages with verl-agent names', () => {
    const g = out(
      'compute_grpo_outcome_advantage',
      {},
      {
        token_level_rewards: [
          [0, 1],
          [0, 0],
          [0, 0],
        ],
        response_mask: [
          [1, 1],
          [1, 0],
          [1, 1],
        ],
        uid: ['a', 'a', 'b'],
      },
    );
    expect(g.row_advantage[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 12);
    expect(g.advantages[1][0]).toBe(g.row_advantage[1]);
    expect(Math.abs(g.advantages[1][1])).toBe(0);
    expect(g.row_advantage[2]).toBe(0);
    const gi = out(
      'compute_gigpo_outcome_advantage',
      { mode: 'mean_norm', gamma: 0.5, invalid_action_penalty_coef: 0.1 },
      {
        token_level_rewards: [
          [0, 1],
          [0, 1],
          [0, 0],
        ],
        step_rewards: [0, 1, 0],
        response_mask: [
          [1, 1],
          [1, 1],
          [1, 1],
        ],
        anchor_obs: ['s0', 's1', 's0'],
        uid: ['u', 'u', 'u'],
        traj_uid: ['a', 'a', 'b'],
        is_action_valid: [1, 1, 0],
      },
    );
    expect(gi.step_returns).toEqual([0.5, 1, -0.1]);
    [0.3, 0, -0.3].forEach((x, i) => expect(gi.step_advantage[i]).toBeCloseTo(x, 12));
    expect(gi.episode_advantage[2]).toBeCloseTo(-0.1 - (1 + 1 - 0.1) / 3, 12);
  });
});

describe('algo probe: the reference definitions (hand-computed)', () => {
  it("policy_loss_sapo: pg_clipfrac by each token's own advantage sign over the effective mask; lower 0", () => {
    // ε = 0.2. Row 0 (Ā > 0): w = e^0.3, only the A > 0 token counts; row 1 (Ā < 0): w = e^−0.4, only the
    // A < 0 token counts; row 2: w = e^0.3 with A < 0 does not count. 2 of 6 tokens.
    const inputs = {
      old_log_prob: [
        [0, 0],
        [0, 0],
        [0, 0],
      ],
      log_prob: [
        [0.3, 0.3],
        [-0.4, -0.4],
        [0.3, 0],
      ],
      advantages: [
        [2, -1],
        [1, -2],
        [-1, -1],
      ],
      response_mask: [
        [1, 1],
        [1, 1],
        [1, 1],
      ],
    };
    const o = out('policy_loss_sapo', {}, inputs);
    expect(o.pg_clipfrac).toBeCloseTo(2 / 6, 6);
    expect(o.pg_clipfrac_lower).toBe(0);
    // sequence masking (δ = 0.1) removes row 1: 1 of the 4 remaining tokens
    const sm = out('policy_loss_sapo', { use_seq_mask: true, seq_mask_delta: 0.1 }, inputs);
    expect(sm.num_masked_seqs).toBe(1);
    expect(sm.pg_clipfrac).toBeCloseTo(1 / 4, 6);
  });

  it("compute_grpo_outcome_advantage, cross-steps off: one sample per trajectory, its rows' mean score", () => {
    // t1's second turn is penalised (score 0.9): samples 0.95 (t1) and 0 (t2); μ = 0.475, σ = 0.95/√2.
    const o = out(
      'compute_grpo_outcome_advantage',
      { compute_mean_std_cross_steps: false },
      {
        token_level_rewards: [
          [0, 1],
          [0, 0.9],
          [0, 0],
        ],
        response_mask: [
          [1, 1],
          [1, 1],
          [1, 1],
        ],
        uid: ['u', 'u', 'u'],
        traj_uid: ['t1', 't1', 't2'],
      },
    );
    const sd = 0.95 / Math.SQRT2;
    [1, 0.9, 0].forEach((s, i) => expect(o.row_advantage[i]).toBeCloseTo((s - 0.475) / (sd + 1e-6), 12));
  });
});

describe('algo probe: malformed input names the problem', () => {
  it('a shared params bag is fine: names another fn reads are ignored', () => {
    const o = out('agg_loss', { loss_agg_mode: 'token-mean', clip_ratio: 0.2, gamma: 0.9 }, { loss_mat: [[2]], loss_mask: [[1]] });
    expect(o.loss).toBe(2);
  });

  const bad: Array<[unknown, RegExp]> = [
    [{ fn: 'nope', inputs: {} }, /unknown fn "nope"; known functions: agg_loss/],
    [{ params: {}, inputs: {} }, /missing field "fn"/],
    [{ fn: 'agg_loss', inputs: { loss_mat: [[1]] } }, /missing input "loss_mask"/],
    [
      { fn: 'agg_loss', inputs: { loss_mat: [[1, 2], [3]], loss_mask: [[1, 1], [1]] } },
      /inputs.loss_mat is ragged: row 0 has 2 entries, row 1 has 1/,
    ],
    [{ fn: 'agg_loss', inputs: { loss_mat: [['NaN']], loss_mask: [[1]] } }, /inputs.loss_mat\[0\]\[0\] must be a finite number, got "NaN"/],
    [{ fn: 'agg_loss', inputs: { loss_mat: [[1]], loss_mask: [[2]] } }, /must be 0 or 1/],
    [
      { fn: 'agg_loss', params: { loss_agg_mode: 'mean' }, inputs: { loss_mat: [[1]], loss_mask: [[1]] } },
      /loss_agg_mode for agg_loss must be one of token-mean/,
    ],
    [
      { fn: 'agg_loss', params: { clip: 1 }, inputs: { loss_mat: [[1]], loss_mask: [[1]] } },
      /unknown param "clip" for agg_loss; agg_loss reads: loss_agg_mode/,
    ],
    [{ fn: 'agg_loss', inputs: { loss_mat: [[1]], loss_mask: [[1]], mask: [[1]] } }, /unknown input "mask"/],
    [{ fn: 'policy_loss_vanilla', params: { clip_ratio_c: 1 }, inputs: lossInputs }, /clip_ratio_c must be > 1/],
    [{ fn: 'policy_loss_vanilla', inputs: { ...lossInputs, old_log_prob: [[0, 0]] } }, /old_log_prob is 1×2 but inputs.log_prob is 2×3/],
    [[1, 2], /must be a JSON object/],
  ];
  it('text input: NaN is not JSON, empty input is named', () => {
    expect(() => runProbeText('{"fn": "agg_loss", "inputs": {"loss_mat": [[NaN]], "loss_mask": [[1]]}}')).toThrow(
      /not valid JSON.*NaN and Infinity are not JSON numbers/,
    );
    expect(() => runProbeText('  ')).toThrow(/no input/);
    expect(runProbeText('{"fn": "agg_loss", "inputs": {"loss_mat": [[3]], "loss_mask": [[1]]}}').outputs.loss).toBe(3);
  });

  for (const [c, re] of bad) {
    it(re.source, () => {
      expect(() => runProbe(c)).toThrow(ProbeInputError);
      expect(() => runProbe(c)).toThrow(re);
    });
  }
});

describe("algo probe: rollout correction with verl's names", () => {
  const inputs = { old_log_prob: [[-1, -2, -0.5]], rollout_log_prob: [[-1.5, -2, -0.5]], response_mask: [[1, 1, 0]] };
  it('rollout_correction: weights null when rollout_is is off; mask and rollout_corr/* metrics always', () => {
    const off = out('rollout_correction', {}, inputs);
    expect(off.rollout_is_weights).toBeNull();
    expect(off.modified_response_mask).toEqual([[1, 1, 0]]);
    expect(off.metrics['rollout_corr/kl']).toBeCloseTo(-0.5 / 2, 8);
    const on = out(
      'rollout_correction',
      { rollout_is: 'token', rollout_is_threshold: 1.5, rollout_rs: 'token_k1', rollout_rs_threshold: '0.8_1.25' },
      inputs,
    );
    expect(on.rollout_is_weights[0][0]).toBeCloseTo(1.5, 12);
    expect(on.rollout_is_weights[0][2]).toBe(0);
    expect(on.modified_response_mask).toEqual([[0, 1, 0]]);
    // an explicit null threshold turns IS off, as verl's `rollout_is_threshold is not None` check does
    expect(out('rollout_correction', { rollout_is: 'token', rollout_is_threshold: null }, inputs).rollout_is_weights).toBeNull();
  });

  it('policy_loss_bypass_mode: pg_loss, metrics and grad_log_prob', () => {
    const o = out(
      'policy_loss_bypass_mode',
      { loss_type: 'reinforce', rollout_is: 'token', rollout_is_threshold: 1.5 },
      { old_log_prob: [[-1.5, -2]], log_prob: [[-1, -2]], advantages: [2], response_mask: [[1, 1]] },
    );
    expect(o.pg_loss).toBeCloseTo(3.5, 5);
    expect(o.grad_log_prob[0][0]).toBeCloseTo(-1.5, 5);
    expect(o.metrics['actor/ppo_kl']).toBeCloseTo(-0.25, 5);
  });

  it('bad correction params and empty masks are one-line errors', () => {
    expect(() => out('rollout_correction', { rollout_rs: 'token_k9', rollout_rs_threshold: 2 }, inputs)).toThrow(
      /unknown rollout_rs option "token_k9"; known options/,
    );
    expect(() => out('rollout_correction', { rollout_rs: 'token_k2' }, inputs)).toThrow(/rollout_rs_threshold must be given/);
    expect(() => out('rollout_correction', { rollout_is: 'geo' }, inputs)).toThrow(
      /rollout_is for rollout_correction must be one of token, sequence/,
    );
    expect(() => out('rollout_correction', {}, { ...inputs, response_mask: [[0, 0, 0]] })).toThrow(/at least one valid token/);
    expect(() =>
      out(
        'policy_loss_bypass_mode',
        { loss_type: 'ppo' },
        { old_log_prob: [[-1]], log_prob: [[-1]], advantages: [1], response_mask: [[1]] },
      ),
    ).toThrow(/loss_type .* must be one of ppo_clip, reinforce/);
    for (const e of [() => out('rollout_correction', { rollout_rs: 'token_k2' }, inputs)]) expect(e).toThrow(ProbeInputError);
  });

  it("icepop_function: slime's per-token tensors", () => {
    const o = out(
      'icepop_function',
      { tis_clip_low: 0.5, tis_clip: 1.5 },
      { train_log_probs: [[0, Math.log(2)]], rollout_log_probs: [[0, 0]], loss_masks: [[1, 1]] },
    );
    expect(o.ice_weight).toEqual([[1, 0]]);
    expect(o.tis_clipfrac).toEqual([[0, 1]]);
    expect(o.tis_abs[0][1]).toBeCloseTo(1, 12);
  });
});
