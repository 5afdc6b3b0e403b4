import { groupBy } from './stats';
import type { AdvantageParams, TurnRow } from './types';

/**
 * Episode returns R_τ = Σ_k ρ_k over each trajectory's rows (undiscounted; spec §1.3), one per row.
 */
export function episodeReturns(rows: readonly TurnRow[]): number[] {
  const total = new Map<string, number>();
  for (const r of rows) total.set(r.trajUid, (total.get(r.trajUid) ?? 0) + r.envReward);
  return rows.map((r) => total.get(r.trajUid)!);
}

/**
 * Row outcome scores S_r = R_τ − λ·(1 − v_r) (+ optional shaping): the reward manager writes R_τ on every
 * row of τ and the penalty then comes off the invalid row only (spec §1.3, §6.1).
 */
export function rowScores(rows: readonly TurnRow[], params: Pick<AdvantageParams, 'invalidPenalty' | 'scoreShaping'>): number[] {
  const R = episodeReturns(rows);
  if (params.scoreShaping && params.scoreShaping.length !== rows.length) {
    throw new Error(`rowScores: scoreShaping has ${params.scoreShaping.length} entries for ${rows.length} rows`);
  }
  return rows.map((r, i) => R[i] - (r.actionValid ? 0 : params.invalidPenalty) + (params.scoreShaping ? params.scoreShaping[i] : 0));
}

/**
 * GiGPO step returns Gret_r = Σ_{j≥k} γ^{j−k} ρ_j over the remaining rows of the same trajectory, then
 * − λ·(1 − v_r) on the row's own step only, AFTER discounting (spec §1.3b, §6.1: the penalty does not
 * propagate to earlier turns).
 */
export function stepReturns(rows: readonly TurnRow[], gamma: number, invalidPenalty: number): number[] {
  const out = new Array<number>(rows.length).fill(0);
  for (const members of groupBy(rows.map((r) => r.trajUid)).values()) {
    let running = 0;
    for (let j = members.length - 1; j >= 0; j--) {
      const i = members[j];
      running = rows[i].envReward + gamma * running;
      out[i] = running;
    }
  }
  return rows.map((r, i) => out[i] - (r.actionValid ? 0 : invalidPenalty));
}
