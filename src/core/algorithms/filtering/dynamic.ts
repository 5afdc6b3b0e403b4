/**
 * DAPO-style dynamic filtering with over-sampling rounds (spec §1.4), as a pure state machine the trainer
 * drives:
 *
 *   let st = startFiltering(step, params);
 *   while (true) {
 *     const groups = rollOut(B groups × G);          // trainer's job
 *     const r = offerRound(st, groups); st = r.state;
 *     if (r.done) break;                              // else roll out another round
 *   }
 *   const { groups, metrics } = finishFiltering(st);
 *
 * Rules (reference dynamic_multi_turn_loop / filter_group_data):
 * - Active only when enabled AND step > coldStartSteps (steps are 1-based); otherwise the first round is
 *   kept as is (one round).
 * - Target: `targetGroups` groups (= B, i.e. B·G trajectories).
 * - A group is uniform when all G raw episode returns R_τ (BEFORE the invalid penalty) are equal.
 * - Normal round: keep the non-uniform groups, appended after those already kept; once the target is
 *   reached, truncate to whole groups and stop.
 * - Last round (round = maxRounds): take up to `deficit` groups, non-uniform first, then uniform ones in
 *   rollout order, so the batch is topped up to the target.
 */

export interface FilterParams {
  readonly enabled: boolean;
  /** max_num_gen_batches: rollout rounds per step (scripts: 3). */
  readonly maxRounds: number;
  /** Plain rollouts for steps ≤ coldStartSteps (paper: 15 ALFWorld, 5 WebShop). */
  readonly coldStartSteps: number;
  /** Groups wanted per step (B). */
  readonly targetGroups: number;
}

/** One rolled-out group: its G raw episode returns and whatever payload the trainer carries along. */
export interface RolledGroup<T> {
  readonly uid: string;
  readonly returns: readonly number[];
  readonly data: T;
}

export interface FilterState<T> {
  readonly step: number;
  readonly params: FilterParams;
  readonly active: boolean;
  readonly round: number;
  readonly kept: ReadonlyArray<RolledGroup<T>>;
  readonly groupsSeen: number;
  readonly uniformSeen: number;
  readonly done: boolean;
}

/** True when every return of the group is identical (zero variance: no GRPO signal). */
export function isUniform(returns: readonly number[]): boolean {
  return returns.every((r) => r === returns[0]);
}

export function filteringActive(step: number, p: FilterParams): boolean {
  return p.enabled && step > p.coldStartSteps;
}

export function startFiltering<T>(step: number, params: FilterParams): FilterState<T> {
  if (!Number.isInteger(params.maxRounds) || params.maxRounds < 1)
    throw new Error(`filtering: maxRounds must be an integer ≥ 1, got ${params.maxRounds}`);
  if (!Number.isInteger(params.targetGroups) || params.targetGroups < 1)
    throw new Error(`filtering: targetGroups must be an integer ≥ 1, got ${params.targetGroups}`);
  return { step, params, active: filteringActive(step, params), round: 0, kept: [], groupsSeen: 0, uniformSeen: 0, done: false };
}

/** Feed one round of rolled-out groups; returns the new state and whether the step's batch is complete. */
export function offerRound<T>(state: FilterState<T>, groups: ReadonlyArray<RolledGroup<T>>): { state: FilterState<T>; done: boolean } {
  if (state.done) throw new Error('filtering: offerRound called after the batch was complete');
  const round = state.round + 1;
  const uniform = groups.map((g) => isUniform(g.returns));
  const uniformCount = uniform.filter(Boolean).length;
  const base = { ...state, round, groupsSeen: state.groupsSeen + groups.length, uniformSeen: state.uniformSeen + uniformCount };
  const target = state.params.targetGroups;
  if (!state.active) {
    const next = { ...base, kept: [...state.kept, ...groups], done: true };
    return { state: next, done: true };
  }
  const informative = groups.filter((_, i) => !uniform[i]);
  if (round >= state.params.maxRounds) {
    const deficit = Math.max(0, target - state.kept.length);
    const topUp = [...informative, ...groups.filter((_, i) => uniform[i])].slice(0, deficit);
    const next = { ...base, kept: [...state.kept, ...topUp], done: true };
    return { state: next, done: true };
  }
  const kept = [...state.kept, ...informative];
  const done = kept.length >= target;
  const next = { ...base, kept: done ? kept.slice(0, target) : kept, done };
  return { state: next, done };
}

/** The kept groups and the step's filtering metrics (filter/rounds, filter/zero_variance_share). */
export function finishFiltering<T>(state: FilterState<T>): { groups: ReadonlyArray<RolledGroup<T>>; metrics: Record<string, number> } {
  if (!state.done) throw new Error('filtering: finishFiltering called before the batch was complete');
  return {
    groups: state.kept,
    metrics: {
      'filter/rounds': state.round,
      'filter/zero_variance_share': state.groupsSeen === 0 ? Number.NaN : state.uniformSeen / state.groupsSeen,
      kept_groups: state.kept.length,
    },
  };
}
