import { rowScores } from './scores';
import { normalizeInGroups, summary } from './stats';
import type { AdvantageFn } from './types';

/**
 * `grpo` (spec §1.3a, the reference default): A_r = (S_r − μ_u)/(σ_u + ε) over the group's turn rows
 * (cross-steps: longer trajectories weigh more), unbiased σ, singleton group μ = 0, σ = 1. With
 * `crossSteps: false` each trajectory contributes one sample (see grpo_traj); with `normByStd: false` it is
 * Dr.GRPO's centring.
 */
export const grpo: AdvantageFn = (rows, p) => {
  const scores = rowScores(rows, p);
  const { advantages, groupStd } = normalizeInGroups(
    scores,
    rows.map((r) => r.uid),
    {
      epsilon: p.epsilon,
      normByStd: p.normByStd,
      crossSteps: p.crossSteps,
      trajIndex: rows.map((r) => r.trajUid),
    },
  );
  const s = summary(advantages);
  let zeroStd = 0;
  for (const v of groupStd.values()) if (v === 0) zeroStd++;
  return {
    value: advantages,
    metrics: { 'critic/advantages_mean': s.mean, 'critic/advantages_std': s.std, zero_std_groups: zeroStd, groups: groupStd.size },
  };
};
