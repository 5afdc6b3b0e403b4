/**
 * The JSON probe: one case `{"fn", "params", "inputs"}` in, `{"outputs": {...}}` out, with verl's names,
 * so anyone holding another implementation (the reference's torch code, a port) can compare number for
 * number. `npm run -s arlarena -- algo` wraps this (src/main/cli/commands/algo.ts).
 *
 * Tensor functions run in float32 tfjs (as training does) and report gradients via tf.grad wrt
 * `log_prob` / `loss_mat` / `logits`; advantage functions run in float64 JS. Malformed cases throw
 * `ProbeInputError` with a one-line message naming the problem.
 */
import * as tf from '@tensorflow/tfjs-core';
import { AGGREGATIONS } from './aggregation/index';
import { gigpoCore } from './advantages/gigpo';
import { groupBy, normalizeInGroups } from './advantages/stats';
import { entropyFromLogits, KL_ESTIMATORS } from './kl/index';
import {
  BYPASS_LOSSES,
  ROLLOUT_IS,
  RolloutCorrectionError,
  rolloutCorrection,
  type BypassLossType,
  type RolloutCorrectionParams,
  type RolloutIsName,
} from './correction/index';
import { POLICY_LOSSES } from './losses/index';
import type { PolicyLossName, PolicyLossParams } from './losses/types';

export class ProbeInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeInputError';
  }
}

type Json = unknown;
type Matrix = number[][];

const COMMON_LOSS_PARAMS = [
  'loss_agg_mode',
  'clip_ratio',
  'clip_ratio_low',
  'clip_ratio_high',
  'clip_ratio_c',
  'use_seq_mask',
  'seq_mask_delta',
];

/** fn → the params and inputs it accepts (required inputs first, then optional ones marked by `?`). */
export const PROBE_FUNCTIONS: Record<string, { params: string[]; inputs: string[] }> = {
  agg_loss: { params: ['loss_agg_mode'], inputs: ['loss_mat', 'loss_mask'] },
  policy_loss_vanilla: { params: COMMON_LOSS_PARAMS, inputs: ['old_log_prob', 'log_prob', 'advantages', 'response_mask'] },
  policy_loss_gspo: { params: COMMON_LOSS_PARAMS, inputs: ['old_log_prob', 'log_prob', 'advantages', 'response_mask'] },
  policy_loss_cispo: { params: COMMON_LOSS_PARAMS, inputs: ['old_log_prob', 'log_prob', 'advantages', 'response_mask'] },
  policy_loss_sapo: {
    params: [...COMMON_LOSS_PARAMS, 'tau_pos', 'tau_neg', 'sapo_per_token_tau'],
    inputs: ['old_log_prob', 'log_prob', 'advantages', 'response_mask'],
  },
  kl_penalty: { params: ['kl_penalty', 'loss_agg_mode'], inputs: ['log_prob', 'ref_log_prob', 'response_mask?'] },
  entropy: { params: ['loss_agg_mode'], inputs: ['logits', 'response_mask?'] },
  compute_grpo_outcome_advantage: {
    params: ['norm_adv_by_std_in_grpo', 'compute_mean_std_cross_steps', 'epsilon'],
    inputs: ['token_level_rewards', 'response_mask', 'uid', 'traj_uid?'],
  },
  rollout_correction: {
    params: ['rollout_is', 'rollout_is_threshold', 'rollout_is_batch_normalize', 'rollout_rs', 'rollout_rs_threshold'],
    inputs: ['old_log_prob', 'rollout_log_prob', 'response_mask'],
  },
  policy_loss_bypass_mode: {
    params: [
      'loss_agg_mode',
      'clip_ratio',
      'clip_ratio_low',
      'clip_ratio_high',
      'clip_ratio_c',
      'loss_type',
      'rollout_is',
      'rollout_is_threshold',
      'rollout_is_batch_normalize',
      'rollout_rs',
      'rollout_rs_threshold',
    ],
    inputs: ['old_log_prob', 'log_prob', 'advantages', 'response_mask'],
  },
  icepop_function: { params: ['tis_clip_low', 'tis_clip'], inputs: ['train_log_probs', 'rollout_log_probs', 'loss_masks'] },
  compute_gigpo_outcome_advantage: {
    params: ['step_advantage_w', 'mode', 'epsilon', 'gamma', 'invalid_action_penalty_coef'],
    inputs: ['token_level_rewards', 'step_rewards', 'response_mask', 'anchor_obs', 'uid', 'traj_uid', 'is_action_valid?'],
  },
};

const ALL_PARAMS = new Set(Object.values(PROBE_FUNCTIONS).flatMap((f) => f.params));
const ALL_INPUTS = new Set(Object.values(PROBE_FUNCTIONS).flatMap((f) => f.inputs.map((i) => i.replace(/\?$/, ''))));

function isObject(x: Json): x is Record<string, Json> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function describe(x: Json): string {
  const s = JSON.stringify(x);
  return s === undefined ? String(x) : s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

function num(x: Json, where: string): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) throw new ProbeInputError(`${where} must be a finite number, got ${describe(x)}`);
  return x;
}

function matrix(x: Json, where: string): Matrix {
  if (!Array.isArray(x)) throw new ProbeInputError(`${where} must be a matrix (a list of rows), got ${describe(x)}`);
  let width = -1;
  return x.map((row, i) => {
    if (!Array.isArray(row)) throw new ProbeInputError(`${where}[${i}] must be a list of numbers, got ${describe(row)}`);
    if (width < 0) width = row.length;
    else if (row.length !== width) throw new ProbeInputError(`${where} is ragged: row 0 has ${width} entries, row ${i} has ${row.length}`);
    return row.map((v, j) => num(v, `${where}[${i}][${j}]`));
  });
}

function mask(x: Json, where: string): Matrix {
  const m = matrix(x, where);
  m.forEach((row, i) =>
    row.forEach((v, j) => {
      if (v !== 0 && v !== 1) throw new ProbeInputError(`${where}[${i}][${j}] must be 0 or 1, got ${v}`);
    }),
  );
  return m;
}

function tensor3(x: Json, where: string): number[][][] {
  if (!Array.isArray(x)) throw new ProbeInputError(`${where} must be a [row][token][vocab] array, got ${describe(x)}`);
  const mats = x.map((m, i) => matrix(m, `${where}[${i}]`));
  mats.forEach((m, i) => {
    if (m.length !== mats[0].length)
      throw new ProbeInputError(`${where} is ragged: row 0 has ${mats[0].length} tokens, row ${i} has ${m.length}`);
    if (m.length > 0 && mats[0].length > 0 && m[0].length !== mats[0][0].length)
      throw new ProbeInputError(`${where} is ragged: vocab sizes differ between rows 0 and ${i}`);
  });
  return mats;
}

function list(x: Json, where: string, n: number): Json[] {
  if (!Array.isArray(x)) throw new ProbeInputError(`${where} must be a list, got ${describe(x)}`);
  if (x.length !== n) throw new ProbeInputError(`${where} has ${x.length} entries but the batch has ${n} rows`);
  return x;
}

function ids(x: Json, where: string, n: number): string[] {
  return list(x, where, n).map((v, i) => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    throw new ProbeInputError(`${where}[${i}] must be a string or number id, got ${describe(v)}`);
  });
}

function sameShape(a: Matrix, b: Matrix, an: string, bn: string): void {
  const wa = a[0]?.length ?? 0;
  const wb = b[0]?.length ?? 0;
  if (a.length !== b.length || (a.length > 0 && wa !== wb)) {
    throw new ProbeInputError(`${bn} is ${b.length}×${wb} but ${an} is ${a.length}×${wa}; they must have the same shape`);
  }
}

function t2(m: Matrix, width: number): tf.Tensor2D {
  return tf.tensor2d(m.length === 0 ? [] : m.flat(), [m.length, width], 'float32');
}

function toMatrix(t: tf.Tensor): Matrix {
  return t.arraySync() as Matrix;
}

function scalarOf(t: tf.Tensor): number {
  return t.dataSync()[0];
}

class Params {
  constructor(
    private readonly p: Record<string, Json>,
    private readonly fn: string,
  ) {}
  number(key: string, dflt: number): number {
    return this.p[key] === undefined || this.p[key] === null ? dflt : num(this.p[key], `params.${key}`);
  }
  bool(key: string, dflt: boolean): boolean {
    const v = this.p[key];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'boolean') throw new ProbeInputError(`params.${key} must be true or false, got ${describe(v)}`);
    return v;
  }
  choice<T extends string>(key: string, choices: readonly T[], dflt: T): T {
    const v = this.p[key];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== 'string' || !(choices as readonly string[]).includes(v)) {
      throw new ProbeInputError(`params.${key} for ${this.fn} must be one of ${choices.join(', ')}, got ${describe(v)}`);
    }
    return v as T;
  }
  has(key: string): boolean {
    return this.p[key] !== undefined && this.p[key] !== null;
  }
}

function lossParams(P: Params): PolicyLossParams {
  const clip = P.number('clip_ratio', 0.2);
  return {
    aggregation: P.choice('loss_agg_mode', AGGREGATIONS.names, 'token-mean'),
    clipRatioLow: P.number('clip_ratio_low', clip),
    clipRatioHigh: P.number('clip_ratio_high', clip),
    clipRatioC: P.number('clip_ratio_c', 3.0),
    tauPos: P.number('tau_pos', 1.0),
    tauNeg: P.number('tau_neg', 1.05),
    sapoPerTokenTau: P.bool('sapo_per_token_tau', false),
    seqMask: { enabled: P.bool('use_seq_mask', false), delta: P.number('seq_mask_delta', 0.223) },
  };
}

/** Parse one case from JSON text and run it. Throws ProbeInputError on malformed input. */
export function runProbeText(text: string): { outputs: Record<string, Json> } {
  if (text.trim() === '') throw new ProbeInputError('no input: pipe one JSON case {"fn", "params", "inputs"} on stdin');
  let raw: Json;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ProbeInputError(`stdin is not valid JSON (${(e as Error).message}); NaN and Infinity are not JSON numbers`);
  }
  return runProbe(raw);
}

/** Validate the case's shape and run it. Throws ProbeInputError on malformed input. */
export function runProbe(raw: Json): { outputs: Record<string, Json> } {
  if (!isObject(raw)) throw new ProbeInputError(`the case must be a JSON object {"fn", "params", "inputs"}, got ${describe(raw)}`);
  for (const k of Object.keys(raw)) {
    if (!['fn', 'params', 'inputs'].includes(k)) throw new ProbeInputError(`unknown top-level field "${k}"; a case has fn, params, inputs`);
  }
  const fn = raw.fn;
  if (typeof fn !== 'string') throw new ProbeInputError(`missing field "fn"; known functions: ${Object.keys(PROBE_FUNCTIONS).join(', ')}`);
  const spec = PROBE_FUNCTIONS[fn];
  if (!spec) throw new ProbeInputError(`unknown fn "${fn}"; known functions: ${Object.keys(PROBE_FUNCTIONS).join(', ')}`);
  const params = raw.params ?? {};
  if (!isObject(params)) throw new ProbeInputError(`params must be an object, got ${describe(params)}`);
  // A comparison harness may send one shared params bag for every fn: names another fn uses are ignored,
  // names no fn knows are typos and rejected.
  for (const k of Object.keys(params)) {
    if (!ALL_PARAMS.has(k)) throw new ProbeInputError(`unknown param "${k}" for ${fn}; ${fn} reads: ${spec.params.join(', ')}`);
  }
  if (!isObject(raw.inputs)) throw new ProbeInputError(`missing field "inputs" (an object with ${spec.inputs.join(', ')})`);
  const inputs = raw.inputs;
  for (const k of Object.keys(inputs)) {
    if (!ALL_INPUTS.has(k))
      throw new ProbeInputError(`unknown input "${k}" for ${fn}; ${fn} reads: ${spec.inputs.join(', ')} (? = optional)`);
  }
  for (const s of spec.inputs) {
    if (!s.endsWith('?') && inputs[s] === undefined) throw new ProbeInputError(`missing input "${s}" for ${fn}`);
  }
  const P = new Params(params, fn);
  switch (fn) {
    case 'agg_loss':
      return { outputs: aggLoss(inputs, P) };
    case 'policy_loss_vanilla':
    case 'policy_loss_gspo':
    case 'policy_loss_cispo':
    case 'policy_loss_sapo':
      return { outputs: policyLoss(fn.slice('policy_loss_'.length) as PolicyLossName, inputs, P) };
    case 'kl_penalty':
      return { outputs: klPenalty(inputs, P) };
    case 'entropy':
      return { outputs: entropy(inputs, P) };
    case 'compute_grpo_outcome_advantage':
      return { outputs: grpoAdvantage(inputs, P) };
    case 'rollout_correction':
      return { outputs: rolloutCorrectionProbe(inputs, P, params) };
    case 'policy_loss_bypass_mode':
      return { outputs: bypassProbe(inputs, P, params) };
    case 'icepop_function':
      return { outputs: icepopProbe(inputs, P) };
    default:
      return { outputs: gigpoAdvantage(inputs, P) };
  }
}

function aggLoss(inputs: Record<string, Json>, P: Params) {
  const L = matrix(inputs.loss_mat, 'inputs.loss_mat');
  const M = mask(inputs.loss_mask, 'inputs.loss_mask');
  sameShape(L, M, 'inputs.loss_mat', 'inputs.loss_mask');
  const width = L[0]?.length ?? 0;
  const fn = AGGREGATIONS.get(P.choice('loss_agg_mode', AGGREGATIONS.names, 'token-mean')).fn;
  return tf.tidy(() => {
    const m = t2(M, width);
    const { value, grad: grads } = tf.valueAndGrad((x: tf.Tensor) => fn(x as tf.Tensor2D, m).value)(t2(L, width));
    return { loss: scalarOf(value), grad_loss_mat: toMatrix(grads) };
  });
}

/** Advantages as a [row][token] matrix, or one value per row broadcast over the row's tokens. */
function advantagesInput(x: Json, rows: number, width: number): Matrix {
  if (Array.isArray(x) && x.every((v) => !Array.isArray(v))) {
    return list(x, 'inputs.advantages', rows).map((v, i) => new Array<number>(width).fill(num(v, `inputs.advantages[${i}]`)));
  }
  return matrix(x, 'inputs.advantages');
}

function policyLoss(mode: PolicyLossName, inputs: Record<string, Json>, P: Params) {
  const old = matrix(inputs.old_log_prob, 'inputs.old_log_prob');
  const lp = matrix(inputs.log_prob, 'inputs.log_prob');
  const M = mask(inputs.response_mask, 'inputs.response_mask');
  sameShape(lp, old, 'inputs.log_prob', 'inputs.old_log_prob');
  sameShape(lp, M, 'inputs.log_prob', 'inputs.response_mask');
  const width = lp[0]?.length ?? 0;
  const A = advantagesInput(inputs.advantages, lp.length, width);
  sameShape(lp, A, 'inputs.log_prob', 'inputs.advantages');
  const params = lossParams(P);
  if (mode === 'vanilla' && !(params.clipRatioC > 1))
    throw new ProbeInputError(`params.clip_ratio_c must be > 1 for dual-clip PPO, got ${params.clipRatioC}`);
  if (mode === 'gspo' && params.seqMask.enabled)
    throw new ProbeInputError('params.use_seq_mask applies to vanilla, cispo and sapo; GSPO bounds the sequence ratio itself');
  const loss = POLICY_LOSSES.get(mode).fn;
  return tf.tidy(() => {
    const oldT = t2(old, width);
    const advT = t2(A, width);
    const maskT = t2(M, width);
    let metrics: Record<string, number> = {};
    const { value, grad: grads } = tf.valueAndGrad((x: tf.Tensor) => {
      const r = loss({ logProb: x as tf.Tensor2D, oldLogProb: oldT, advantages: advT, mask: maskT }, params);
      metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, scalarOf(v)]));
      return r.value;
    })(t2(lp, width));
    return {
      pg_loss: scalarOf(value),
      pg_clipfrac: metrics['actor/pg_clipfrac'],
      ppo_kl: metrics['actor/ppo_kl'],
      pg_clipfrac_lower: metrics['actor/pg_clipfrac_lower'],
      num_masked_seqs: metrics['actor/num_masked_seqs'],
      grad_log_prob: toMatrix(grads),
    };
  });
}

function optionalMask(x: Json, like: Matrix, width: number, where: string): Matrix {
  if (x === undefined) return like.map(() => new Array<number>(width).fill(1));
  const M = mask(x, where);
  sameShape(like, M, 'the input', where);
  return M;
}

function klPenalty(inputs: Record<string, Json>, P: Params) {
  const lp = matrix(inputs.log_prob, 'inputs.log_prob');
  const ref = matrix(inputs.ref_log_prob, 'inputs.ref_log_prob');
  sameShape(lp, ref, 'inputs.log_prob', 'inputs.ref_log_prob');
  const width = lp[0]?.length ?? 0;
  const M = optionalMask(inputs.response_mask, lp, width, 'inputs.response_mask');
  const kl = KL_ESTIMATORS.get(P.choice('kl_penalty', KL_ESTIMATORS.names, 'low_var_kl')).fn;
  const agg = AGGREGATIONS.get(P.choice('loss_agg_mode', AGGREGATIONS.names, 'token-mean')).fn;
  return tf.tidy(() => {
    const refT = t2(ref, width);
    const maskT = t2(M, width);
    let kld: Matrix = [];
    const { value, grad: grads } = tf.valueAndGrad((x: tf.Tensor) => {
      const k = kl(x as tf.Tensor2D, refT).value;
      kld = toMatrix(k);
      return agg(k, maskT).value;
    })(t2(lp, width));
    return { kld, kl_loss: scalarOf(value), grad_log_prob: toMatrix(grads) };
  });
}

function entropy(inputs: Record<string, Json>, P: Params) {
  const logits = tensor3(inputs.logits, 'inputs.logits');
  const rows = logits.length;
  const width = logits[0]?.length ?? 0;
  const vocab = logits[0]?.[0]?.length ?? 0;
  if (rows > 0 && width > 0 && vocab === 0) throw new ProbeInputError('inputs.logits has an empty vocabulary dimension');
  const like = logits.map((m) => m.map(() => 0));
  const M = optionalMask(inputs.response_mask, like, width, 'inputs.response_mask');
  const agg = AGGREGATIONS.get(P.choice('loss_agg_mode', AGGREGATIONS.names, 'token-mean')).fn;
  return tf.tidy(() => {
    const maskT = t2(M, width);
    let ent: Matrix = [];
    const x = tf.tensor3d(logits.flat(2), [rows, width, vocab], 'float32');
    const { value, grad: grads } = tf.valueAndGrad((z: tf.Tensor) => {
      const h = entropyFromLogits(z as tf.Tensor3D);
      ent = toMatrix(h);
      return agg(h, maskT).value;
    })(x);
    return { entropy: ent, entropy_loss: scalarOf(value), grad_logits: grads.arraySync() as number[][][] };
  });
}

function rowSums(m: Matrix): number[] {
  return m.map((row) => row.reduce((a, b) => a + b, 0));
}

function grpoAdvantage(inputs: Record<string, Json>, P: Params) {
  const R = matrix(inputs.token_level_rewards, 'inputs.token_level_rewards');
  const M = mask(inputs.response_mask, 'inputs.response_mask');
  sameShape(R, M, 'inputs.token_level_rewards', 'inputs.response_mask');
  const uid = ids(inputs.uid, 'inputs.uid', R.length);
  const crossSteps = P.bool('compute_mean_std_cross_steps', true);
  if (!crossSteps && inputs.traj_uid === undefined)
    throw new ProbeInputError('missing input "traj_uid": compute_mean_std_cross_steps=false groups samples by trajectory');
  const traj = inputs.traj_uid === undefined ? undefined : ids(inputs.traj_uid, 'inputs.traj_uid', R.length);
  const { advantages } = normalizeInGroups(rowSums(R), uid, {
    epsilon: P.number('epsilon', 1e-6),
    normByStd: P.bool('norm_adv_by_std_in_grpo', true),
    crossSteps,
    trajIndex: traj,
  });
  return { advantages: M.map((row, i) => row.map((m) => advantages[i] * m)), row_advantage: advantages };
}

function gigpoAdvantage(inputs: Record<string, Json>, P: Params) {
  const R = matrix(inputs.token_level_rewards, 'inputs.token_level_rewards');
  const M = mask(inputs.response_mask, 'inputs.response_mask');
  sameShape(R, M, 'inputs.token_level_rewards', 'inputs.response_mask');
  const n = R.length;
  const stepIn = list(inputs.step_rewards, 'inputs.step_rewards', n).map((v, i) => num(v, `inputs.step_rewards[${i}]`));
  const anchor = list(inputs.anchor_obs, 'inputs.anchor_obs', n).map((v, i) => {
    if (typeof v !== 'string') throw new ProbeInputError(`inputs.anchor_obs[${i}] must be a string, got ${describe(v)}`);
    return v;
  });
  const uid = ids(inputs.uid, 'inputs.uid', n);
  const traj = ids(inputs.traj_uid, 'inputs.traj_uid', n);
  const valid =
    inputs.is_action_valid === undefined
      ? new Array<boolean>(n).fill(true)
      : list(inputs.is_action_valid, 'inputs.is_action_valid', n).map((v, i) => {
          if (v === true || v === 1) return true;
          if (v === false || v === 0) return false;
          throw new ProbeInputError(`inputs.is_action_valid[${i}] must be true/false or 1/0, got ${describe(v)}`);
        });
  const lambda = P.number('invalid_action_penalty_coef', 0);
  // With `gamma`, step_rewards are the per-step env rewards ρ and the probe discounts them within each
  // trajectory (rows in order); without it they are the reference's precomputed step returns.
  let stepReturns = stepIn.slice();
  if (P.has('gamma')) {
    const gamma = P.number('gamma', 0.95);
    for (const members of groupBy(traj).values()) {
      let running = 0;
      for (let j = members.length - 1; j >= 0; j--) {
        running = stepIn[members[j]] + gamma * running;
        stepReturns[members[j]] = running;
      }
    }
  }
  // The invalid penalty: off the row's score and off its step return, after discounting (spec §6.1).
  stepReturns = stepReturns.map((g, i) => g - (valid[i] ? 0 : lambda));
  const scores = rowSums(R).map((s, i) => s - (valid[i] ? 0 : lambda));
  const core = gigpoCore(
    { scores, stepReturns, uid, trajUid: traj, anchor },
    {
      epsilon: P.number('epsilon', 1e-6),
      stepAdvantageW: P.number('step_advantage_w', 1.0),
      mode: P.choice('mode', ['mean_norm', 'mean_std_norm'] as const, 'mean_norm'),
    },
  );
  return {
    advantages: M.map((row, i) => row.map((m) => core.advantages[i] * m)),
    episode_advantage: core.episode,
    step_advantage: core.step,
    step_returns: stepReturns,
  };
}

/**
 * verl's rollout_correction parameters with verl's defaults: rollout_is null (off) | "token" | "sequence";
 * rollout_is_threshold 2.0 (an explicit null turns IS off, as in verl); rollout_rs null (off) or comma-separated
 * options; rollout_rs_threshold a number or a string ("0.5_2.0" for k1, comma separated per option).
 */
function correctionParams(P: Params, raw: Record<string, Json>): RolloutCorrectionParams {
  const is = P.choice('rollout_is', ['token', 'sequence'] as const, 'token');
  const rs = raw.rollout_rs;
  if (rs !== undefined && rs !== null && typeof rs !== 'string')
    throw new ProbeInputError(`params.rollout_rs must be a string of comma-separated options or null, got ${describe(rs)}`);
  const rsT = raw.rollout_rs_threshold;
  if (rsT !== undefined && rsT !== null && typeof rsT !== 'string' && !(typeof rsT === 'number' && Number.isFinite(rsT))) {
    throw new ProbeInputError(`params.rollout_rs_threshold must be a number or a string such as "0.5_2.0", got ${describe(rsT)}`);
  }
  const thresholdOff = Object.hasOwn(raw, 'rollout_is_threshold') && raw.rollout_is_threshold === null;
  return {
    rolloutIs: raw.rollout_is === undefined || raw.rollout_is === null || thresholdOff ? null : (is as RolloutIsName),
    rolloutIsThreshold: P.number('rollout_is_threshold', 2.0),
    rolloutIsThresholdLower: 0,
    rolloutIsBatchNormalize: P.bool('rollout_is_batch_normalize', false),
    rolloutRs: typeof rs === 'string' ? rs : null,
    rolloutRsThreshold: rsT === undefined ? null : (rsT as string | number | null),
  };
}

function atLeastOneToken(M: Matrix, where: string): void {
  if (!M.some((row) => row.some((v) => v !== 0)))
    throw new ProbeInputError(`${where} must contain at least one valid token (1), as verl requires`);
}

function runCorrection<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof RolloutCorrectionError) throw new ProbeInputError(`params: ${e.message}`);
    throw e;
  }
}

/** verl compute_rollout_correction_and_rejection_mask in float64: weights (null when off), the masked mask, metrics. */
function rolloutCorrectionProbe(inputs: Record<string, Json>, P: Params, raw: Record<string, Json>) {
  const old = matrix(inputs.old_log_prob, 'inputs.old_log_prob');
  const roll = matrix(inputs.rollout_log_prob, 'inputs.rollout_log_prob');
  const M = mask(inputs.response_mask, 'inputs.response_mask');
  sameShape(old, roll, 'inputs.old_log_prob', 'inputs.rollout_log_prob');
  sameShape(old, M, 'inputs.old_log_prob', 'inputs.response_mask');
  atLeastOneToken(M, 'inputs.response_mask');
  const r = runCorrection(() => rolloutCorrection(old, roll, M, correctionParams(P, raw)));
  return { rollout_is_weights: r.weights, modified_response_mask: r.mask, metrics: r.metrics };
}

/** verl compute_policy_loss_bypass_mode: old_log_prob is the rollout's; float32 tfjs with the gradient wrt log_prob. */
function bypassProbe(inputs: Record<string, Json>, P: Params, raw: Record<string, Json>) {
  const old = matrix(inputs.old_log_prob, 'inputs.old_log_prob');
  const lp = matrix(inputs.log_prob, 'inputs.log_prob');
  const M = mask(inputs.response_mask, 'inputs.response_mask');
  sameShape(lp, old, 'inputs.log_prob', 'inputs.old_log_prob');
  sameShape(lp, M, 'inputs.log_prob', 'inputs.response_mask');
  atLeastOneToken(M, 'inputs.response_mask');
  const width = lp[0]?.length ?? 0;
  const A = advantagesInput(inputs.advantages, lp.length, width);
  sameShape(lp, A, 'inputs.log_prob', 'inputs.advantages');
  const params = lossParams(P);
  if (!(params.clipRatioC > 1)) throw new ProbeInputError(`params.clip_ratio_c must be > 1 for dual-clip PPO, got ${params.clipRatioC}`);
  const lossType = P.choice('loss_type', BYPASS_LOSSES.names, 'ppo_clip') as BypassLossType;
  const correction = correctionParams(P, raw);
  const loss = BYPASS_LOSSES.get(lossType).fn;
  return runCorrection(() =>
    tf.tidy(() => {
      const oldT = t2(old, width);
      const advT = t2(A, width);
      const maskT = t2(M, width);
      let metrics: Record<string, number> = {};
      const { value, grad: grads } = tf.valueAndGrad((x: tf.Tensor) => {
        const r = loss({ logProb: x as tf.Tensor2D, oldLogProb: oldT, advantages: advT, mask: maskT }, { ...params, lossType, correction });
        metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, scalarOf(v)]));
        return r.value;
      })(t2(lp, width));
      return { pg_loss: scalarOf(value), metrics, grad_log_prob: toMatrix(grads) };
    }),
  );
}

/**
 * slime's icepop_function (and OpenRLHF's icepop branch): per token, ice_weight = ρ when tis_clip_low ≤ ρ ≤
 * tis_clip else 0, ρ = exp(train − rollout); returns slime's per-token tensors before its reducer (tis = ρ,
 * tis_clipfrac = [weight ≠ ρ], tis_abs = |ρ − 1|), all as [row][token] matrices zeroed outside loss_masks.
 */
function icepopProbe(inputs: Record<string, Json>, P: Params) {
  const train = matrix(inputs.train_log_probs, 'inputs.train_log_probs');
  const roll = matrix(inputs.rollout_log_probs, 'inputs.rollout_log_probs');
  const M = mask(inputs.loss_masks, 'inputs.loss_masks');
  sameShape(train, roll, 'inputs.train_log_probs', 'inputs.rollout_log_probs');
  sameShape(train, M, 'inputs.train_log_probs', 'inputs.loss_masks');
  atLeastOneToken(M, 'inputs.loss_masks');
  const lower = P.number('tis_clip_low', 0);
  const upper = P.number('tis_clip', 2.0);
  const lr = train.map((row, i) => row.map((v, j) => v - roll[i][j]));
  const r = ROLLOUT_IS.get('icepop').fn(lr, M, { threshold: upper, thresholdLower: lower, batchNormalize: false });
  const rho = lr.map((row, i) => row.map((v, j) => Math.exp(v) * M[i][j]));
  return {
    ice_weight: r.value,
    tis: rho,
    tis_clipfrac: lr.map((row, i) => row.map((v, j) => (r.value[i][j] !== Math.exp(v) ? 1 : 0) * M[i][j])),
    tis_abs: lr.map((row, i) => row.map((v, j) => Math.abs(Math.exp(v) - 1) * M[i][j])),
    metrics: r.metrics,
  };
}
