/**
 * Train/inference mismatch (spec §4, `training/rollout_probs_diff_*`): how far the rollout engine's behaviour
 * log-probs are from the trainer engine's recomputation of the same tokens. Reported as the metric keys
 * `mismatch/logprob_abs_max` and `mismatch/logprob_abs_mean` (src/shared/metrics.ts).
 */
export interface MismatchStats {
  max: number;
  mean: number;
  tokens: number;
}

export function mismatchStats(a: readonly (readonly number[])[], b: readonly (readonly number[])[]): MismatchStats {
  if (a.length !== b.length) throw new Error(`mismatchStats: ${a.length} rows vs ${b.length} rows`);
  let max = 0;
  let sum = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i].length !== b[i].length) throw new Error(`mismatchStats: row ${i} has ${a[i].length} vs ${b[i].length} tokens`);
    for (let j = 0; j < a[i].length; j++) {
      const d = Math.abs(a[i][j] - b[i][j]);
      if (d > max || Number.isNaN(d)) max = d;
      sum += d;
      n++;
    }
  }
  return { max, mean: n > 0 ? sum / n : NaN, tokens: n };
}
