/**
 * The algorithmic heart of ARLArena: the paper's four policy-gradient design dimensions (spec §1) as closed,
 * typed catalogs, plus the auxiliary KL / entropy terms (spec §2.1) and a JSON probe (probe.ts).
 *
 * ## The row batch (what the trainer passes in)
 * Every training sample is ONE TURN of one trajectory (spec §0): row r = (group u, trajectory τ, turn k).
 * A mini-batch of N rows with padded response width T is:
 *   - `logProb`    tf.Tensor2D [N,T] float32 — log π_θ(y_{r,t}) of the sampled response tokens, computed
 *                  inside the gradient closure (the only differentiable input of the policy loss);
 *   - `oldLogProb` tf.Tensor2D [N,T] — log π_old, recomputed by the trainer after rollout (a constant);
 *                  for a single mini-batch × one epoch pass `stopGradient(logProb)` so w = 1 exactly
 *                  (spec §6.1.4);
 *   - `refLogProb` tf.Tensor2D [N,T] — log π_ref of the frozen warm-start policy (KL loss only);
 *   - `mask`       tf.Tensor2D [N,T] — 1 on response tokens, 0 on padding (prompts are never trained on);
 *   - `advantages` tf.Tensor2D [N,T] — the row advantage A_r broadcast over its tokens: build it from the
 *                  per-row numbers with `perToken(tf.tensor1d(rowAdv), mask)`;
 *   - `entropy`    tf.Tensor2D [N,T] — entropyFromLogits(logits [N,T,V]) of the current policy (when β_H ≠ 0).
 *
 * ## Families (one signature each, each returns { value, metrics })
 *   - AGGREGATIONS   (lossMat [N,T], mask [N,T]) → scalar                       aggregation/
 *   - POLICY_LOSSES  (PolicyLossInput, PolicyLossParams) → pg_loss + actor/* metrics  losses/
 *   - KL_ESTIMATORS  (logProb, refLogProb) → per-token KL [N,T]                 kl/
 *   - ADVANTAGES     (TurnRow[] (plain numbers), AdvantageParams) → number per row   advantages/
 *   - filtering      DAPO dynamic filtering state machine + overlong shaping    filtering/
 *   - ROLLOUT_IS / ROLLOUT_RS / BYPASS_LOSSES  rollout correction (verl algorithm.rollout_correction): IS weights,
 *                    chained rejection masks and bypass-mode losses against the rollout engine's log-probs   correction/
 * `actorLoss` combines them: pg_loss − β_H·Agg[H] + β_KL·Agg[KL]. Catalog lookups throw an error listing the
 * known names on an unknown name.
 *
 * ## tfjs notes for callers
 *   - Call `actorLoss` inside `optimizer.minimize` / `tf.variableGrads`; it returns its metric tensors
 *     `tf.keep`-ed so they survive that scope: read them (`dataSync`) after the update and dispose them.
 *   - Everything else allocates ordinary tensors: wrap calls in `tf.tidy`.
 *   - Gradients need the full `@tensorflow/tfjs` package (or tfjs-core's register_all_gradients) loaded by
 *     the process; src/core imports only tfjs-core.
 */
export { AGGREGATIONS, aggregate } from './aggregation/index';
export type { AggregationFn, AggregationName } from './aggregation/index';
export { POLICY_LOSSES, sequenceMask } from './losses/index';
export type { PolicyLossFn, PolicyLossInput, PolicyLossName, PolicyLossParams } from './losses/index';
export { actorLoss, inRewardKl } from './losses/actor-loss';
export type { ActorBatch, ActorLossParams } from './losses/actor-loss';
export { KL_ESTIMATORS, entropyFromLogits } from './kl/index';
export type { KlFn, KlName } from './kl/index';
export { ADVANTAGES, episodeReturns, gigpoCore, groupStats, normalizeInGroups, rowScores, stepReturns } from './advantages/index';
export type { AdvantageFn, AdvantageName, AdvantageParams, TurnRow } from './advantages/index';
export * from './filtering/index';
export { BYPASS_LOSSES, ROLLOUT_IS, ROLLOUT_RS, RolloutCorrectionError, rejectionMask, rolloutCorrection } from './correction/index';
export type { BypassLossType, RolloutCorrectionParams, RolloutCorrectionResult, RolloutIsName, RolloutRsName } from './correction/index';
export { UnknownVariantError, makeCatalog } from './catalog';
export type { Catalog, CatalogEntry } from './catalog';
export { maskedMean, perToken, stopGradient } from './tensor';
export type { NumberResult, TensorResult } from './types';
