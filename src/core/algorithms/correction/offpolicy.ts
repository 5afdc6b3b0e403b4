/**
 * verl's off-policy diagnostics between the training policy's and the rollout engine's log-probs
 * (rollout_corr_helper.py `compute_offpolicy_metrics`), under `rollout_corr/*`.
 *
 * Per-row quantities (perplexities, log-PPL differences, the sequence χ²) average over ALL rows, fully padded
 * rows included (their masked mean log-prob is 0: perplexity 1, difference 0); token quantities are masked means.
 * k3_kl uses the unclamped log-ratio; the χ² terms clamp it (and its row sum) to ±20.
 */
import { assertHasTokens, clampSafe, mapM, maskedMean, maxOf, mean, minOf, rowMean, rowSum } from './math';
import type { Matrix } from './types';

export function offPolicyMetrics(trainLogProb: Matrix, rolloutLogProb: Matrix, mask: Matrix): Record<string, number> {
  assertHasTokens(mask);
  const lpTrain = rowMean(trainLogProb, mask);
  const lpRollout = rowMean(rolloutLogProb, mask);
  const logRatio = mapM(trainLogProb, (v, i, j) => v - rolloutLogProb[i][j]);
  const diff = lpRollout.map((r, i) => r - lpTrain[i]);
  const seqSum = rowSum(logRatio, mask);
  return {
    'rollout_corr/training_ppl': mean(lpTrain.map((l) => Math.exp(-l))),
    'rollout_corr/training_log_ppl': mean(lpTrain.map((l) => -l)),
    'rollout_corr/kl': maskedMean(
      mapM(rolloutLogProb, (v, i, j) => v - trainLogProb[i][j]),
      mask,
    ),
    'rollout_corr/k3_kl': maskedMean(
      mapM(logRatio, (r) => Math.exp(r) - r - 1),
      mask,
    ),
    'rollout_corr/rollout_ppl': mean(lpRollout.map((l) => Math.exp(-l))),
    'rollout_corr/rollout_log_ppl': mean(lpRollout.map((l) => -l)),
    'rollout_corr/log_ppl_diff': mean(diff),
    'rollout_corr/log_ppl_abs_diff': mean(diff.map(Math.abs)),
    'rollout_corr/log_ppl_diff_max': maxOf(diff),
    'rollout_corr/log_ppl_diff_min': minOf(diff),
    'rollout_corr/ppl_ratio': mean(diff.map(Math.exp)),
    'rollout_corr/chi2_token':
      maskedMean(
        mapM(logRatio, (r) => Math.exp(clampSafe(r)) ** 2),
        mask,
      ) - 1,
    'rollout_corr/chi2_seq': mean(seqSum.map((s) => Math.exp(2 * clampSafe(s)))) - 1,
  };
}
