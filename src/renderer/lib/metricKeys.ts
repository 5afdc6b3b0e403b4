/** Which metrics the charts show by default: the paper's stability dashboard. */
export const DEFAULT_CHART_KEYS = [
  'episode/success_rate',
  'episode/reward_mean',
  'episode/valid_format_ratio',
  'actor/grad_norm',
  'actor/entropy',
  'actor/kl_loss',
  'actor/pg_clipfrac',
  'response_length/mean',
  'mismatch/logprob_abs_max',
  'perf/tokens_per_s',
] as const;

export const SUCCESS_KEY = 'episode/success_rate';
/** Held-out success, logged at validation steps only (group size 1 on heldOutSeeds(training.valEpisodes)). */
export const VAL_SUCCESS_KEY = 'val/success_rate';
export const WALL_KEY = 'perf/wall_s';
export const TOKENS_KEY = 'perf/total_tokens';
/** Keys whose non-finite values mean the update itself broke (used by the verdict). */
export const BREAKING_KEYS = ['actor/grad_norm', 'actor/pg_loss'] as const;
