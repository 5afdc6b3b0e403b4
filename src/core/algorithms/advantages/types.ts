import type { NumberResult } from '../types';

/** Advantage-estimator names (dimension 3 of the paper, spec §1.3). */
export type AdvantageName = 'grpo' | 'grpo_traj' | 'drgrpo' | 'gigpo' | 'empg' | 'rloo';

/**
 * Field names match the rollout's TurnRow (src/core/agent/rollout.ts), so its rows can be passed as they are.
 *
 * One turn row r = (u, τ, k) as the estimators see it (plain numbers; spec §0). Rows of one trajectory must
 * appear in turn order (the discounted step return runs over "the rows after this one of the same traj").
 */
export interface TurnRow {
  /** Group id u: the task instance the G rollouts share. */
  readonly uid: string;
  /** Trajectory id τ. */
  readonly trajUid: string;
  /** Environment reward ρ_r of this step. */
  readonly envReward: number;
  /** Validity v_r (format valid and admissible); an invalid row costs λ (spec §2.2). */
  readonly actionValid: boolean;
  /** Anchor state o_r: the raw observation acted from (no template, no history) — GiGPO's step groups. */
  readonly anchor: string;
  /** EMPG: mean token entropy of the response under π_old. */
  readonly entropy?: number;
  /** Overlong shaping (DAPO): number of response tokens. */
  readonly responseLength?: number;
}

export interface AdvantageParams {
  /** λ, subtracted from the row's score (and GiGPO step return) when the row is invalid. */
  readonly invalidPenalty: number;
  /** ε in (x − μ)/(σ + ε). The reference uses 1e-6. */
  readonly epsilon: number;
  /** Divide by the group std (GRPO); false = Dr.GRPO-style mean centring. */
  readonly normByStd: boolean;
  /** Pool all turn rows of a group for μ, σ (the reference default); false = one value per trajectory. */
  readonly crossSteps: boolean;
  /** GiGPO: discount γ of the step return. */
  readonly gamma: number;
  /** GiGPO: weight ω of the step (anchor-group) term. */
  readonly stepAdvantageW: number;
  /** GiGPO: normalisation of both terms. */
  readonly gigpoMode: 'mean_std_norm' | 'mean_norm';
  /** EMPG: k (self-calibrating gradient scaling), k_f (future-clarity bonus), ζ. */
  readonly empg: { readonly k: number; readonly kf: number; readonly zeta: number };
  /** Optional extra per-row score shaping added to S_r (overlong penalty, in-reward KL); same length as rows. */
  readonly scoreShaping?: readonly number[];
}

/** One signature for the family: rows → one advantage per row (broadcast over its tokens by the caller). */
export type AdvantageFn = (rows: readonly TurnRow[], params: AdvantageParams) => NumberResult<number[]>;
