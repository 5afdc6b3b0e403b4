import { grpo } from './grpo';
import type { AdvantageFn } from './types';

/**
 * `grpo_traj` (spec §1.3a "vanilla_grpo"): group statistics over trajectories, each contributing the mean
 * of its row scores, then every row normalised with them. The per-trajectory alternative to cross-steps.
 */
export const grpoTraj: AdvantageFn = (rows, p) => grpo(rows, { ...p, crossSteps: false });
