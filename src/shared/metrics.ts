/**
 * The metric catalog: every diagnostic the trainer logs, defined once (key, meaning, unit, chart group).
 *
 * The trainer logs each key every step (NaN when a value does not apply that step, never omitted), the
 * collapse detector reads keys from here, and the renderer's charts take labels and units from here.
 * Keys are stable and namespaced like the reference implementation's (spec §4): `actor/…`, `episode/…`,
 * `val/…`, `perf/…`. Renaming a key breaks stored runs: add a new key instead.
 */
export type MetricUnit =
  'ratio' | 'count' | 'reward' | 'nats' | 'tokens' | 'steps' | 'seconds' | 'tokens/s' | 'lr' | 'norm' | 'loss' | 'value';

export type MetricGroup =
  'task' | 'format' | 'policy' | 'kl' | 'gradient' | 'advantage' | 'lengths' | 'filtering' | 'mismatch' | 'throughput' | 'validation';

export interface MetricDef {
  readonly key: string;
  readonly label: string;
  readonly meaning: string;
  readonly unit: MetricUnit;
  readonly group: MetricGroup;
  /** Which direction is good, for charts and the compare view's "best". */
  readonly better?: 'higher' | 'lower';
}

const defs = [
  // task (training rollouts)
  {
    key: 'episode/success_rate',
    label: 'Success rate',
    meaning: 'Share of training trajectories whose last active turn reported won.',
    unit: 'ratio',
    group: 'task',
    better: 'higher',
  },
  {
    key: 'episode/reward_mean',
    label: 'Episode return (mean)',
    meaning: 'Mean undiscounted episode return R_τ over training trajectories (before the invalid penalty).',
    unit: 'reward',
    group: 'task',
    better: 'higher',
  },
  {
    key: 'episode/reward_max',
    label: 'Episode return (max)',
    meaning: 'Largest episode return in the step.',
    unit: 'reward',
    group: 'task',
  },
  {
    key: 'episode/reward_min',
    label: 'Episode return (min)',
    meaning: 'Smallest episode return in the step.',
    unit: 'reward',
    group: 'task',
  },
  {
    key: 'episode/length_mean',
    label: 'Episode length',
    meaning: 'Mean number of active turns per trajectory.',
    unit: 'steps',
    group: 'task',
  },
  {
    key: 'episode/score_mean',
    label: 'Task score',
    meaning: 'Mean environment task score in [0,1] (WebShop-style score for shop; 1/0 success elsewhere).',
    unit: 'ratio',
    group: 'task',
    better: 'higher',
  },
  // format / validity
  {
    key: 'episode/valid_action_ratio',
    label: 'Valid-action ratio',
    meaning: 'Share of training turn rows whose action was well-formed and admissible (v_r = 1).',
    unit: 'ratio',
    group: 'format',
    better: 'higher',
  },
  {
    key: 'episode/valid_format_ratio',
    label: 'Valid-format ratio',
    meaning: 'Share of training turn rows matching the strict <think>…</think><action>…</action> format.',
    unit: 'ratio',
    group: 'format',
    better: 'higher',
  },
  // policy loss / clipping
  {
    key: 'actor/pg_loss',
    label: 'Policy-gradient loss',
    meaning: 'Aggregated clipped surrogate loss, mean over mini-batches.',
    unit: 'loss',
    group: 'policy',
  },
  {
    key: 'actor/pg_clipfrac',
    label: 'Clip fraction',
    meaning: 'Share of response tokens where the clipped branch is active (per loss; see spec §4).',
    unit: 'ratio',
    group: 'policy',
  },
  {
    key: 'actor/pg_clipfrac_lower',
    label: 'Dual-clip fraction',
    meaning: 'Share of tokens hitting the dual-clip cap (A < 0).',
    unit: 'ratio',
    group: 'policy',
  },
  {
    key: 'actor/ppo_kl',
    label: 'PPO KL (old‖new)',
    meaning: 'Mean over tokens of log π_old − log π_θ, from unclamped log-ratios; measures off-policy drift.',
    unit: 'nats',
    group: 'policy',
  },
  {
    key: 'actor/num_masked_seqs',
    label: 'Masked sequences',
    meaning: 'Rows removed by sequence masking (GRPO_SM) in the step.',
    unit: 'count',
    group: 'policy',
  },
  {
    key: 'actor/off_policy_step',
    label: 'Off-policy steps',
    meaning: 'Number of mini-batches minus one: how far the last update drifts from the behaviour policy.',
    unit: 'count',
    group: 'policy',
  },
  {
    key: 'actor/entropy',
    label: 'Entropy',
    meaning: 'Mean token entropy of the current policy over response tokens.',
    unit: 'nats',
    group: 'policy',
  },
  {
    key: 'actor/kl_loss',
    label: 'KL to reference',
    meaning: 'Aggregated KL(π_θ‖π_ref) estimate (k1/abs/k2/k3 as configured).',
    unit: 'nats',
    group: 'kl',
    better: 'lower',
  },
  { key: 'actor/kl_coef', label: 'KL coefficient', meaning: 'β_KL in effect this step.', unit: 'value', group: 'kl' },
  // gradient / optimiser
  {
    key: 'actor/grad_norm',
    label: 'Gradient norm',
    meaning: 'Global L2 norm of the gradient before clipping, mean over mini-batches.',
    unit: 'norm',
    group: 'gradient',
    better: 'lower',
  },
  {
    key: 'actor/grad_norm_max',
    label: 'Gradient norm (max)',
    meaning: "Largest pre-clipping gradient norm among the step's mini-batches.",
    unit: 'norm',
    group: 'gradient',
  },
  {
    key: 'actor/skipped_updates',
    label: 'Skipped updates',
    meaning:
      'Mini-batch updates skipped this step because the gradient, or the update it gave (a new weight or Adam moment), was non-finite.',
    unit: 'count',
    group: 'gradient',
    better: 'lower',
  },
  { key: 'actor/lr', label: 'Learning rate', meaning: 'Learning rate in effect this step.', unit: 'lr', group: 'gradient' },
  // advantages
  {
    key: 'critic/advantages_mean',
    label: 'Advantage mean',
    meaning: 'Mean row advantage over the batch.',
    unit: 'value',
    group: 'advantage',
  },
  {
    key: 'critic/advantages_std',
    label: 'Advantage std',
    meaning: 'Standard deviation of row advantages over the batch.',
    unit: 'value',
    group: 'advantage',
  },
  // lengths
  {
    key: 'response_length/mean',
    label: 'Response length',
    meaning: 'Mean response tokens per turn row.',
    unit: 'tokens',
    group: 'lengths',
  },
  {
    key: 'response_length/clip_ratio',
    label: 'Responses at max length',
    meaning: 'Share of turn rows whose response hit the max response length.',
    unit: 'ratio',
    group: 'lengths',
    better: 'lower',
  },
  { key: 'prompt_length/mean', label: 'Prompt length', meaning: 'Mean prompt tokens per turn row.', unit: 'tokens', group: 'lengths' },
  {
    key: 'batch/rows',
    label: 'Turn rows',
    meaning: "Number of turn rows (training samples) in the step's batch.",
    unit: 'count',
    group: 'lengths',
  },
  // response diversity (collapse onto one repeated token or template: RAGEN #52, RAGEN-2's template collapse)
  {
    key: 'response/identical_share',
    label: 'Identical responses',
    meaning: "Share of the step's responses equal, token for token, to its most common response.",
    unit: 'ratio',
    group: 'policy',
    better: 'lower',
  },
  {
    key: 'response/distinct_2',
    label: 'Distinct bigrams',
    meaning: "Distinct token bigrams over all bigrams of the step's responses (distinct-2); near 0 when responses repeat one token.",
    unit: 'ratio',
    group: 'policy',
    better: 'higher',
  },
  {
    key: 'response/prompt_mi',
    label: 'Prompt dependence (MI)',
    meaning:
      "Mutual information between a row's prompt and the tokens of its response (plug-in estimate over the step's rows): how much responses depend on their input; near 0 when every prompt gets the same template.",
    unit: 'nats',
    group: 'policy',
    better: 'higher',
  },
  // filtering
  {
    key: 'filter/zero_variance_share',
    label: 'Zero-variance groups',
    meaning: 'Share of rolled-out groups whose G episode returns were all equal (no GRPO signal).',
    unit: 'ratio',
    group: 'filtering',
  },
  {
    key: 'filter/rounds',
    label: 'Filter rounds',
    meaning: 'Rollout rounds used by dynamic filtering this step (1 when off or in cold start).',
    unit: 'count',
    group: 'filtering',
  },
  // train/inference mismatch
  {
    key: 'mismatch/logprob_abs_max',
    label: 'Mismatch (max)',
    meaning:
      'Max |log π_rollout − log π_trainer| over response tokens (rollout engine vs trainer engine, same weights). Not measured (NaN) with rollout.policyLag > 0: the gap then holds the lag, logged as offpolicy/lag_logprob_abs_max.',
    unit: 'nats',
    group: 'mismatch',
    better: 'lower',
  },
  {
    key: 'mismatch/logprob_abs_mean',
    label: 'Mismatch (mean)',
    meaning:
      'Mean |log π_rollout − log π_trainer| over response tokens. Not measured (NaN) with rollout.policyLag > 0 (see offpolicy/lag_logprob_abs_mean).',
    unit: 'nats',
    group: 'mismatch',
    better: 'lower',
  },
  // policy lag (rollout.policyLag = k, the pressure ladder's level 3): rollouts sampled by θ_{s−k}, π_old = θ_s.
  {
    key: 'offpolicy/lag_logprob_abs_max',
    label: 'Policy-lag gap (max)',
    meaning:
      "Max |log π_behaviour − log π_old| over response tokens with rollout.policyLag = k > 0: the policy's own move over k updates (staleness), the engine gap included; NaN without a lag.",
    unit: 'nats',
    group: 'mismatch',
  },
  {
    key: 'offpolicy/lag_logprob_abs_mean',
    label: 'Policy-lag gap (mean)',
    meaning:
      "Mean |log π_behaviour − log π_old| over response tokens with rollout.policyLag = k > 0 (the policy's k-update move); NaN without a lag.",
    unit: 'nats',
    group: 'mismatch',
  },
  // rollout correction (verl's algorithm.rollout_correction, the same names verl logs; docs/guides/rollout-correction.md).
  // Off-policy diagnostics between the trainer's log-probs and the rollout engine's (compute_offpolicy_metrics).
  {
    key: 'rollout_corr/training_ppl',
    label: 'Trainer perplexity',
    meaning: 'Mean over rows of exp(−masked mean log π_train); fully padded rows count as 1.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/training_log_ppl',
    label: 'Trainer log-perplexity',
    meaning: 'Mean over rows of −masked mean log π_train.',
    unit: 'nats',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/kl',
    label: 'KL(rollout‖trainer), k1',
    meaning: 'Token mean of log π_rollout − log π_train.',
    unit: 'nats',
    group: 'mismatch',
    better: 'lower',
  },
  {
    key: 'rollout_corr/k3_kl',
    label: 'KL(rollout‖trainer), k3',
    meaning: 'Token mean of e^r − r − 1 with r = log π_train − log π_rollout (unclamped).',
    unit: 'nats',
    group: 'mismatch',
    better: 'lower',
  },
  {
    key: 'rollout_corr/rollout_ppl',
    label: 'Rollout perplexity',
    meaning: 'Mean over rows of exp(−masked mean log π_rollout).',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_log_ppl',
    label: 'Rollout log-perplexity',
    meaning: 'Mean over rows of −masked mean log π_rollout.',
    unit: 'nats',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/log_ppl_diff',
    label: 'Log-PPL difference',
    meaning: 'Mean over rows of (mean log π_rollout − mean log π_train): > 0 when the trainer finds the responses less likely.',
    unit: 'nats',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/log_ppl_abs_diff',
    label: 'Log-PPL |difference|',
    meaning: 'Mean over rows of |mean log π_rollout − mean log π_train|.',
    unit: 'nats',
    group: 'mismatch',
    better: 'lower',
  },
  {
    key: 'rollout_corr/log_ppl_diff_max',
    label: 'Log-PPL difference (max)',
    meaning: 'Largest per-row log-PPL difference.',
    unit: 'nats',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/log_ppl_diff_min',
    label: 'Log-PPL difference (min)',
    meaning: 'Smallest per-row log-PPL difference.',
    unit: 'nats',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/ppl_ratio',
    label: 'PPL ratio',
    meaning: 'Mean over rows of trainer PPL / rollout PPL.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/chi2_token',
    label: 'χ² (token)',
    meaning: "Token mean of ρ² − 1, ρ = exp(clamp(log π_train − log π_rollout, ±20)): the IS weights' variance.",
    unit: 'value',
    group: 'mismatch',
    better: 'lower',
  },
  {
    key: 'rollout_corr/chi2_seq',
    label: 'χ² (sequence)',
    meaning: 'Mean over rows of (Π_t ρ_t)² − 1 (row log-ratio sum clamped to ±20).',
    unit: 'value',
    group: 'mismatch',
    better: 'lower',
  },
  // Importance weights (compute_is_metrics): taken before truncation; NaN when algorithm.rolloutCorrection.is is off.
  {
    key: 'rollout_corr/rollout_is_mean',
    label: 'IS weight (mean)',
    meaning: 'Token mean of the IS weights before truncation.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_max',
    label: 'IS weight (max)',
    meaning: 'Largest IS weight before truncation (sequence level: over all rows, from the log-ratio sums).',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_min',
    label: 'IS weight (min)',
    meaning: 'Smallest IS weight before truncation.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_std',
    label: 'IS weight (std)',
    meaning: 'Std of the IS weights clamped to [1/threshold, threshold].',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_eff_sample_size',
    label: 'IS effective sample size',
    meaning: '1 / mean of (w/mean w)² over tokens, w clamped to [1/threshold, threshold]: 1 = all weights equal.',
    unit: 'ratio',
    group: 'mismatch',
    better: 'higher',
  },
  {
    key: 'rollout_corr/rollout_is_ratio_fraction_high',
    label: 'IS weights above threshold',
    meaning: 'Share of tokens (sequence level: rows) whose weight exceeds rollout_is_threshold.',
    unit: 'ratio',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_ratio_fraction_low',
    label: 'IS weights below 1/threshold',
    meaning: 'Share of tokens (sequence level: rows) whose weight is below 1/rollout_is_threshold.',
    unit: 'ratio',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_seq_mean',
    label: 'IS row weight (mean)',
    meaning: 'Mean over all rows of the per-row mean weight (fully padded rows count as 0).',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_seq_std',
    label: 'IS row weight (std)',
    meaning: 'Unbiased std over rows of the per-row mean weight.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_seq_max',
    label: 'IS row weight (max)',
    meaning: 'Largest per-row mean weight.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_seq_min',
    label: 'IS row weight (min)',
    meaning: 'Smallest per-row mean weight.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_seq_max_deviation',
    label: 'IS row weight (max |w − 1|)',
    meaning: 'Largest distance of a per-row mean weight from 1.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_seq_fraction_high',
    label: 'IS rows above threshold',
    meaning: 'Share of rows whose mean weight exceeds the threshold.',
    unit: 'ratio',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_seq_fraction_low',
    label: 'IS rows below 1/threshold',
    meaning: 'Share of rows whose mean weight is below 1/threshold (fully padded rows count).',
    unit: 'ratio',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_is_batch_norm_factor',
    label: 'IS batch-norm factor',
    meaning: 'Batch mean the truncated weights were divided by (1 when it was ≤ 1e-8); NaN without rollout_is_batch_normalize.',
    unit: 'value',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/icepop_masked_fraction',
    label: 'IcePop masked tokens',
    meaning: "Share of tokens IcePop gives weight 0 (ratio outside [lower, upper]); slime's tis_clipfrac.",
    unit: 'ratio',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/icepop_ratio_abs_dev',
    label: 'IcePop |ratio − 1|',
    meaning: "Token mean of |π_train/π_rollout − 1|; slime's tis_abs.",
    unit: 'value',
    group: 'mismatch',
    better: 'lower',
  },
  // Rejection (compute_rollout_rejection_mask), all options chained; per-option keys: rolloutRsOptionKey.
  {
    key: 'rollout_corr/rollout_rs_masked_fraction',
    label: 'RS rejected tokens',
    meaning: 'Share of response tokens rejected by the chained rollout_rs options.',
    unit: 'ratio',
    group: 'mismatch',
  },
  {
    key: 'rollout_corr/rollout_rs_seq_masked_fraction',
    label: 'RS rows with a rejection',
    meaning: 'Share of ALL rows (fully padded ones included) with at least one rejected token.',
    unit: 'ratio',
    group: 'mismatch',
  },
  // throughput
  {
    key: 'perf/tokens_per_s',
    label: 'Throughput',
    meaning: 'Prompt + response tokens processed per wall-clock second in the step.',
    unit: 'tokens/s',
    group: 'throughput',
    better: 'higher',
  },
  {
    key: 'perf/step_s',
    label: 'Step time',
    meaning: 'Wall-clock seconds for the whole step.',
    unit: 'seconds',
    group: 'throughput',
    better: 'lower',
  },
  {
    key: 'perf/rollout_s',
    label: 'Rollout time',
    meaning: 'Seconds spent generating and stepping environments.',
    unit: 'seconds',
    group: 'throughput',
  },
  {
    key: 'perf/logprob_s',
    label: 'Log-prob time',
    meaning: 'Seconds spent recomputing old and reference log-probs.',
    unit: 'seconds',
    group: 'throughput',
  },
  {
    key: 'perf/update_s',
    label: 'Update time',
    meaning: 'Seconds spent in forward/backward/optimiser updates.',
    unit: 'seconds',
    group: 'throughput',
  },
  {
    key: 'perf/wall_s',
    label: 'Wall time',
    meaning: 'Seconds since the run started (cumulative, excluding paused time).',
    unit: 'seconds',
    group: 'throughput',
  },
  {
    key: 'perf/total_tokens',
    label: 'Tokens seen',
    meaning: 'Cumulative prompt + response tokens processed by the run.',
    unit: 'tokens',
    group: 'throughput',
  },
  {
    key: 'perf/max_memory_allocated_gb',
    label: 'Peak GPU memory (GB)',
    meaning:
      "GPU memory TensorFlow holds for this run after the step, in GB (verl's key): its allocator grows on demand and never gives memory back, so this is the peak so far. NaN when training is not on a GPU.",
    unit: 'value',
    group: 'throughput',
    better: 'lower',
  },
  // validation (NaN on steps without validation)
  {
    key: 'val/success_rate',
    label: 'Validation success',
    meaning: 'Held-out success rate (group size 1, temperature 0.6); NaN on steps without validation.',
    unit: 'ratio',
    group: 'validation',
    better: 'higher',
  },
  {
    key: 'val/score_mean',
    label: 'Validation score',
    meaning: 'Held-out mean task score; NaN on steps without validation.',
    unit: 'ratio',
    group: 'validation',
    better: 'higher',
  },
  {
    key: 'val/episodes',
    label: 'Validation episodes',
    meaning:
      'Held-out episodes behind the validation (the n of its success rate, for its binomial noise); NaN on steps without validation.',
    unit: 'count',
    group: 'validation',
  },
] as const satisfies readonly MetricDef[];

export type MetricKey = (typeof defs)[number]['key'];

export const METRIC_CATALOG: readonly MetricDef[] = defs;

const byKey = new Map<string, MetricDef>(defs.map((d) => [d.key, d]));

/** Per-environment / per-task-type validation keys are dynamic: `val/<env>/<task_type>/success_rate`. */
export function validationTaskKey(env: string, taskType: string): string {
  return `val/${env}/${taskType}/success_rate`;
}

/**
 * True when metric `key` is one whose NaN means "not computed this step" (validation keys, logged NaN between
 * validations). Here, not in src/core, so the renderer's live charts apply the same rule as the store's series
 * and the detector (src/core/stability/nonFinite.ts).
 */
export function nanMeansNotApplicable(key: string): boolean {
  return key.startsWith('val/') || metricDef(key)?.group === 'validation';
}

export function metricDef(key: string): MetricDef | undefined {
  const d = byKey.get(key);
  if (d) return d;
  const rs = rolloutRsOptionDef(key);
  if (rs) return rs;
  const m = /^val\/([^/]+)\/([^/]+)\/success_rate$/.exec(key);
  if (m) {
    return {
      key,
      label: `Validation success (${m[1]} · ${m[2]})`,
      meaning: `Held-out success on ${m[1]} tasks of type ${m[2]}.`,
      unit: 'ratio',
      group: 'validation',
      better: 'higher',
    };
  }
  return undefined;
}

/** verl's rejection options (`rollout_rs`), the parameter of the per-option metric family below. */
export const ROLLOUT_RS_OPTIONS = [
  'token_k1',
  'token_k2',
  'token_k3',
  'seq_sum_k1',
  'seq_sum_k2',
  'seq_sum_k3',
  'seq_mean_k1',
  'seq_mean_k2',
  'seq_mean_k3',
  'seq_max_k2',
  'seq_max_k3',
] as const;
export type RolloutRsOption = (typeof ROLLOUT_RS_OPTIONS)[number];

/** The per-option statistics verl logs as `rollout_corr/rollout_rs_<option>_<stat>` (compute_rs_metrics + masked fractions). */
export const ROLLOUT_RS_STATS: Readonly<Record<string, string>> = {
  mean: "token mean of the option's statistic (a sequence statistic counts once per token of its row)",
  max: 'largest value of the statistic (sequence options: over rows with tokens)',
  min: 'smallest value of the statistic',
  std: 'std of the statistic clamped to [lower, upper] (k1: log bounds; else [0, upper])',
  fraction_high: 'share of tokens (sequence options: rows) above the upper bound',
  fraction_low: 'share below the lower bound (k1 options; 0 otherwise)',
  seq_mean: 'mean over rows with tokens of the per-row statistic (token options: its row mean)',
  seq_std: 'unbiased std over rows of the per-row statistic',
  seq_max: 'largest per-row statistic',
  seq_min: 'smallest per-row statistic',
  seq_max_deviation: 'largest |per-row statistic|',
  seq_fraction_high: 'share of rows whose statistic is above the upper bound',
  seq_fraction_low: 'share of rows whose statistic is below the lower bound (k1 options only)',
  masked_fraction: 'share of response tokens this option rejects',
  seq_masked_fraction: 'share of rows with tokens where this option rejects any token',
};

/** `rollout_corr/rollout_rs_<option>_<stat>`: logged only for the options a run enables (like val/<env>/<type>). */
export function rolloutRsOptionKey(option: RolloutRsOption, stat: string): string {
  return `rollout_corr/rollout_rs_${option}_${stat}`;
}

function rolloutRsOptionDef(key: string): MetricDef | undefined {
  for (const o of ROLLOUT_RS_OPTIONS) {
    const prefix = `rollout_corr/rollout_rs_${o}_`;
    if (!key.startsWith(prefix)) continue;
    const stat = key.slice(prefix.length);
    const meaning = ROLLOUT_RS_STATS[stat];
    if (meaning === undefined) return undefined;
    const ratio = stat.includes('fraction');
    return {
      key,
      label: `RS ${o} ${stat.replace(/_/g, ' ')}`,
      meaning: `Rejection option ${o}: ${meaning}.`,
      unit: ratio ? 'ratio' : 'value',
      group: 'mismatch',
    };
  }
  return undefined;
}

export function isRolloutRsOptionKey(key: string): boolean {
  return rolloutRsOptionDef(key) !== undefined;
}

export function isMetricKey(key: string): key is MetricKey {
  return byKey.has(key);
}

/** One logged step: every catalog key present (NaN where not applicable) plus dynamic validation keys. */
export interface MetricRecord {
  readonly step: number;
  readonly values: Readonly<Record<string, number>>;
}
