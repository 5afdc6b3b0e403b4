import { rowScores } from './scores';
import { groupBy, summary } from './stats';
import type { AdvantageFn } from './types';

/**
 * `rloo` (leave-one-out baseline, verl's compute_rloo_outcome_advantage): for a group of n > 1 samples
 * A_r = S_r·n/(n−1) − μ·n/(n−1) = S_r − mean of the others; a singleton keeps A_r = S_r. Samples are the
 * group's turn rows (cross-steps), like grpo.
 */
export const rloo: AdvantageFn = (rows, p) => {
  const scores = rowScores(rows, p);
  const adv = scores.slice();
  for (const members of groupBy(rows.map((r) => r.uid)).values()) {
    const n = members.length;
    if (n < 2) continue;
    const mean = members.reduce((s, i) => s + scores[i], 0) / n;
    for (const i of members) adv[i] = (scores[i] * n) / (n - 1) - (mean * n) / (n - 1);
  }
  const s = summary(adv);
  return { value: adv, metrics: { 'critic/advantages_mean': s.mean, 'critic/advantages_std': s.std } };
};
