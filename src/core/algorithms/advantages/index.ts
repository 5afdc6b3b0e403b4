import { makeCatalog } from '../catalog';
import { drgrpo } from './drgrpo';
import { empg } from './empg';
import { gigpo } from './gigpo';
import { grpo } from './grpo';
import { grpoTraj } from './grpo-traj';
import { rloo } from './rloo';
import type { AdvantageFn, AdvantageName } from './types';

export type { AdvantageFn, AdvantageName, AdvantageParams, TurnRow } from './types';
export { episodeReturns, rowScores, stepReturns } from './scores';
export { groupStats, normalizeInGroups } from './stats';
export { gigpoCore } from './gigpo';

/** The advantage catalog (dimension 3 of the paper, spec §1.3). Inputs are turn rows, outputs one A per row. */
export const ADVANTAGES = makeCatalog<AdvantageName, AdvantageFn>('advantage estimator', {
  grpo: { name: 'grpo', summary: 'Group-normalised outcome over all turn rows of the group (cross-steps).', fn: grpo },
  grpo_traj: { name: 'grpo_traj', summary: 'Group-normalised outcome with one sample per trajectory.', fn: grpoTraj },
  drgrpo: { name: 'drgrpo', summary: 'Dr.GRPO: outcome minus the group mean, no std.', fn: drgrpo },
  gigpo: { name: 'gigpo', summary: 'GiGPO: episode term + ω·anchor-state step term with discounted returns.', fn: gigpo },
  empg: { name: 'empg', summary: 'EMPG: GRPO advantage rescaled by entropy confidence plus a future-clarity bonus.', fn: empg },
  rloo: { name: 'rloo', summary: 'RLOO: outcome minus the mean of the other samples of the group.', fn: rloo },
});
