/**
 * The IS and RS catalogs and verl's pipeline (compute_rollout_correction_and_rejection_mask). See index.ts.
 */
import { ROLLOUT_RS_OPTIONS } from '../../../shared/metrics';
import { makeCatalog } from '../catalog';
import type { NumberResult } from '../types';
import { icepopIs } from './is-icepop';
import { sequenceIs } from './is-sequence';
import { tokenIs } from './is-token';
import { assertHasTokens, mapM, maskedMean } from './math';
import { offPolicyMetrics } from './offpolicy';
import { sequenceRs } from './rs-sequence';
import { tokenRs } from './rs-token';
import { parseRsOptions, parseRsThresholds, RolloutCorrectionError } from './thresholds';
import type { Matrix, RolloutIsFn, RolloutIsName, RolloutRsFn, RolloutRsName } from './types';

export const ROLLOUT_IS = makeCatalog<RolloutIsName, RolloutIsFn>('rollout IS level', {
  token: {
    name: 'token',
    summary: 'Truncated IS (TIS): each token weighted by min(π_train/π_rollout, threshold) (verl rollout_is=token).',
    fn: tokenIs,
  },
  sequence: {
    name: 'sequence',
    summary: 'Sequence IS: each row weighted by min(Π_t ratio, threshold) (verl rollout_is=sequence).',
    fn: sequenceIs,
  },
  icepop: { name: 'icepop', summary: 'IcePop: token weight = ratio inside [lower, upper], 0 outside (slime, OpenRLHF).', fn: icepopIs },
});

const rsEntry = (name: RolloutRsName, summary: string, fn: RolloutRsFn) => ({ name, summary, fn });

export const ROLLOUT_RS = makeCatalog<RolloutRsName, RolloutRsFn>('rollout RS option', {
  token_k1: rsEntry(
    'token_k1',
    'Reject tokens with log(lower) ≤ −log ratio ≤ log(upper) failing (two-sided, "lower_upper").',
    tokenRs('k1'),
  ),
  token_k2: rsEntry('token_k2', 'Reject tokens with ½(log ratio)² > upper.', tokenRs('k2')),
  token_k3: rsEntry('token_k3', 'Reject tokens with e^r − 1 − r > upper.', tokenRs('k3')),
  seq_sum_k1: rsEntry('seq_sum_k1', 'Reject rows whose Σ_t k1 leaves [log lower, log upper].', sequenceRs('sum', 'k1')),
  seq_sum_k2: rsEntry('seq_sum_k2', 'Reject rows whose Σ_t k2 > upper.', sequenceRs('sum', 'k2')),
  seq_sum_k3: rsEntry('seq_sum_k3', 'Reject rows whose Σ_t k3 > upper.', sequenceRs('sum', 'k3')),
  seq_mean_k1: rsEntry(
    'seq_mean_k1',
    'Reject rows whose mean k1 leaves [log lower, log upper] (geometric-mean ratio bounds).',
    sequenceRs('mean', 'k1'),
  ),
  seq_mean_k2: rsEntry('seq_mean_k2', 'Reject rows whose mean k2 > upper.', sequenceRs('mean', 'k2')),
  seq_mean_k3: rsEntry('seq_mean_k3', 'Reject rows whose mean k3 > upper.', sequenceRs('mean', 'k3')),
  seq_max_k2: rsEntry('seq_max_k2', 'Reject rows whose largest token k2 > upper.', sequenceRs('max', 'k2')),
  seq_max_k3: rsEntry('seq_max_k3', 'Reject rows whose largest token k3 > upper.', sequenceRs('max', 'k3')),
});

// The catalog and the metric family (src/shared/metrics.ts) name the same options.
if (ROLLOUT_RS.names.length !== ROLLOUT_RS_OPTIONS.length) throw new Error('ROLLOUT_RS and ROLLOUT_RS_OPTIONS disagree');

/** verl's parameters, as the config resolves them (null = off). */
export interface RolloutCorrectionParams {
  readonly rolloutIs: RolloutIsName | null;
  readonly rolloutIsThreshold: number;
  /** IcePop's lower bound (unused by token / sequence). */
  readonly rolloutIsThresholdLower: number;
  readonly rolloutIsBatchNormalize: boolean;
  /** Comma-separated RS options, or null. */
  readonly rolloutRs: string | null;
  /** One threshold for all options or one per option, comma separated; k1 options take "lower_upper". */
  readonly rolloutRsThreshold: string | number | null;
}

export interface RolloutCorrectionResult {
  /** Weights [N][T] to multiply each token's policy loss by; null when IS is off. */
  readonly weights: number[][] | null;
  /** The response mask with rejected tokens set to 0. */
  readonly mask: number[][];
  readonly metrics: Record<string, number>;
}

/** Chain the RS options: a token survives only if every option keeps it (verl's combined mask, logical AND). */
export function rejectionMask(logRatio: Matrix, mask: Matrix, rs: string, threshold: string | number | null): NumberResult<number[][]> {
  const options = parseRsOptions(rs, ROLLOUT_RS.names);
  const bounds = parseRsThresholds(options, threshold);
  let combined = mapM(mask, () => 1);
  const metrics: Record<string, number> = {};
  for (const o of options) {
    const r = ROLLOUT_RS.get(o).fn(logRatio, mask, bounds.get(o)!);
    combined = mapM(combined, (c, i, j) => c * r.value[i][j]);
    Object.assign(metrics, r.metrics);
  }
  metrics['rollout_corr/rollout_rs_masked_fraction'] = maskedMean(
    mapM(combined, (c) => 1 - c),
    mask,
  );
  // Over ALL rows, fully padded ones included (they count as not masked), unlike the per-option fraction.
  const rejectedRows = mask.filter((row, i) => row.some((m, j) => m !== 0 && !(combined[i][j] > 0.5))).length;
  metrics['rollout_corr/rollout_rs_seq_masked_fraction'] = mask.length > 0 ? rejectedRows / mask.length : 0;
  return { value: mapM(mask, (m, i, j) => m * combined[i][j]), metrics };
}

/**
 * verl's compute_rollout_correction_and_rejection_mask: log-ratio = train − rollout; IS weights (when on),
 * rejection mask (when on) and the off-policy diagnostics, every metric under `rollout_corr/*`.
 * `trainLogProb` is π_old (decoupled mode) or the current π_θ (bypass mode).
 */
export function rolloutCorrection(
  trainLogProb: Matrix,
  rolloutLogProb: Matrix,
  mask: Matrix,
  p: RolloutCorrectionParams,
): RolloutCorrectionResult {
  assertHasTokens(mask);
  const logRatio = mapM(trainLogProb, (v, i, j) => v - rolloutLogProb[i][j]);
  const metrics: Record<string, number> = {};
  let weights: number[][] | null = null;
  if (p.rolloutIs !== null) {
    if (!(p.rolloutIsThreshold > 0)) throw new RolloutCorrectionError(`rollout_is_threshold must be positive, got ${p.rolloutIsThreshold}`);
    const r = ROLLOUT_IS.get(p.rolloutIs).fn(logRatio, mask, {
      threshold: p.rolloutIsThreshold,
      thresholdLower: p.rolloutIsThresholdLower,
      batchNormalize: p.rolloutIsBatchNormalize,
    });
    weights = r.value;
    Object.assign(metrics, r.metrics);
  }
  let kept = mapM(mask, (m) => m);
  if (p.rolloutRs !== null) {
    const r = rejectionMask(logRatio, mask, p.rolloutRs, p.rolloutRsThreshold);
    kept = r.value;
    Object.assign(metrics, r.metrics);
  }
  Object.assign(metrics, offPolicyMetrics(trainLogProb, rolloutLogProb, mask));
  return { weights, mask: kept, metrics };
}
