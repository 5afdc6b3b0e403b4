import { grpo } from './grpo';
import type { AdvantageFn } from './types';

/**
 * `grpo_traj` (spec §1.3a "vanilla_grpo", compute_mean_std_cross_steps = False): group statistics over
 * trajectories, each contributing one sample — the mean of its rows' scores S_r, invalid penalty included
 * (ARLArena recipe/world_agent/ppo/core_algos.py::compute_grpo_outcome_advantage) — then every row
 * normalised with them. The per-trajectory alternative to cross-steps.
 */
export const grpoTraj: AdvantageFn = (rows, p) => grpo(rows, { ...p, crossSteps: false });
