import { grpo } from './grpo';
import type { AdvantageFn } from './types';

/**
 * `grpo_traj` (spec §1.3a "vanilla_grpo", compute_mean_std_cross_steps = False): group statistics over
 * trajectories, each contributing one sample (its first row's score, as the reference), then every row
 * normalised with them. The per-trajectory alternative to cross-steps.
 */
export const grpoTraj: AdvantageFn = (rows, p) => grpo(rows, { ...p, crossSteps: false });
