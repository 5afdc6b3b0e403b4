import { rowScores, stepReturns } from './scores';
import { groupBy, normalizeInGroups, summary } from './stats';
import type { AdvantageFn } from './types';

export interface GigpoCoreInput {
  /** Row outcome scores S_r (penalty already applied). */
  readonly scores: readonly number[];
  /** Row step returns Gret_r (discounted, penalty already applied). */
  readonly stepReturns: readonly number[];
  readonly uid: readonly string[];
  readonly trajUid: readonly string[];
  readonly anchor: readonly string[];
}

/**
 * GiGPO's combination on precomputed scores (verl-agent compute_gigpo_outcome_advantage):
 *   episode term Â^E: grpo cross-steps over group u on S_r;
 *   step term Â^S: Gret_r normalised within its anchor group (same u AND identical anchor text);
 *   A_r = Â^E_r + ω·Â^S_r.
 * `mean_std_norm`: (x − μ)/(σ + ε); `mean_norm`: x − μ. Episode singleton: μ = 0, σ = 1; anchor singleton:
 * μ = its own value, so Â^S = 0 (spec §6.1).
 */
export function gigpoCore(input: GigpoCoreInput, p: { epsilon: number; stepAdvantageW: number; mode: 'mean_std_norm' | 'mean_norm' }) {
  const n = input.scores.length;
  for (const [k, v] of Object.entries(input)) {
    if ((v as readonly unknown[]).length !== n)
      throw new Error(`gigpo: ${k} has ${(v as readonly unknown[]).length} entries for ${n} rows`);
  }
  const normByStd = p.mode === 'mean_std_norm';
  const episode = normalizeInGroups(input.scores, input.uid, { epsilon: p.epsilon, normByStd, crossSteps: true }).advantages;
  const step = new Array<number>(n).fill(0);
  // JSON keys keep (uid, anchor) pairs unambiguous whatever characters the observation text holds.
  const anchorKeys = input.uid.map((u, i) => JSON.stringify([u, input.anchor[i]]));
  let singletons = 0;
  const groups = groupBy(anchorKeys);
  for (const members of groups.values()) {
    if (members.length === 1) {
      singletons++;
      continue;
    }
    const xs = members.map((i) => input.stepReturns[i]);
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    const std = Math.sqrt(xs.reduce((a, b) => a + (b - mean) * (b - mean), 0) / (xs.length - 1));
    for (const i of members) step[i] = normByStd ? (input.stepReturns[i] - mean) / (std + p.epsilon) : input.stepReturns[i] - mean;
  }
  const advantages = episode.map((e, i) => e + p.stepAdvantageW * step[i]);
  return { advantages, episode, step, anchorGroups: groups.size, anchorSingletons: singletons };
}

/**
 * `gigpo` (spec §1.3b; SAMPO's advantage): episode-level group term plus ω × the anchor-state step term,
 * with discounted step returns (γ) and the invalid penalty on the row's own step after discounting.
 */
export const gigpo: AdvantageFn = (rows, p) => {
  const core = gigpoCore(
    {
      scores: rowScores(rows, p),
      stepReturns: stepReturns(rows, p.gamma, p.invalidPenalty),
      uid: rows.map((r) => r.uid),
      trajUid: rows.map((r) => r.trajUid),
      anchor: rows.map((r) => r.anchor),
    },
    { epsilon: p.epsilon, stepAdvantageW: p.stepAdvantageW, mode: p.gigpoMode },
  );
  const s = summary(core.advantages);
  return {
    value: core.advantages,
    metrics: {
      'critic/advantages_mean': s.mean,
      'critic/advantages_std': s.std,
      anchor_groups: core.anchorGroups,
      anchor_singletons: core.anchorSingletons,
    },
  };
};
