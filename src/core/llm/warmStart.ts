/**
 * Behaviour cloning of an HF checkpoint on the environments' experts, through its chat template (the paper starts RL
 * from RFT checkpoints whose format validity is already high; spec §3). Each expert turn becomes one row: the turn's
 * prompt as the policy would see it (LlmPolicy.promptIds) and the expert's `<think>…</think><action>…</action>`
 * response followed by the checkpoint's end-of-turn token, so that the cloned policy also learns to stop.
 * The loss is the token-mean negative log-likelihood of the response tokens; the optimiser step is the caller's
 * (the trainer's AdamW), so this file stays below the training layer.
 */
import * as tf from '@tensorflow/tfjs';
import { createEnv, expertResponse, runEpisode } from '../envs/index';
import type { LlmRow } from './causalLm';
import type { LlmPolicy } from './policy';

/** Expert rows for `seeds` of `env` (history window `k`), in seed then turn order. */
export function llmExpertRows(
  policy: LlmPolicy,
  env: string,
  seeds: readonly number[],
  k: number,
): Array<{ promptIds: number[]; responseIds: number[] }> {
  const end = policy.stopIds()[0];
  if (end === undefined)
    throw new Error(
      'behaviour cloning: the checkpoint has no eos token (config.json eos_token_id or tokenizer_config.json eos_token) to end responses with',
    );
  const rows: Array<{ promptIds: number[]; responseIds: number[] }> = [];
  for (const seed of seeds) {
    const ep = runEpisode(createEnv(env), seed, (e) => expertResponse(e), k);
    for (const t of ep.turns)
      rows.push({ promptIds: policy.promptIds(t.prompt), responseIds: [...policy.tokenizer.encode(t.response), end] });
  }
  return rows;
}

/** Token-mean NLL of the rows' responses (call inside tf.variableGrads over policy.trainableVariables()). */
export function behaviourCloningLoss(policy: LlmPolicy, rows: readonly LlmRow[]): tf.Scalar {
  const o = policy.tokenLogProbs(rows);
  return tf.div(tf.neg(tf.sum(o.logProbs)), tf.sum(o.mask)) as tf.Scalar;
}
