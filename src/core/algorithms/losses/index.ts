import { makeCatalog } from '../catalog';
import { cispo } from './cispo';
import { gspo } from './gspo';
import { sapo } from './sapo';
import type { PolicyLossFn, PolicyLossName } from './types';
import { vanilla } from './vanilla';

export type { PolicyLossFn, PolicyLossInput, PolicyLossName, PolicyLossParams } from './types';
export { pgAggregation } from './types';
export { sequenceMask } from './seq-mask';

/** The importance-sampling clipping catalog (dimension 2 of the paper, spec §1.2). */
export const POLICY_LOSSES = makeCatalog<PolicyLossName, PolicyLossFn>('policy loss', {
  vanilla: { name: 'vanilla', summary: 'PPO/GRPO token clip with asymmetric ε and dual clip c (GRPO, DAPO, GiGPO, EMPG).', fn: vanilla },
  cispo: { name: 'cispo', summary: 'Stop-gradient clipped IS weight × log-prob; gradient never cut (tolerant, CISPO).', fn: cispo },
  sapo: { name: 'sapo', summary: 'Soft sigmoid gate with temperature by advantage sign (tolerant, SAPO).', fn: sapo },
  gspo: { name: 'gspo', summary: 'Hard clip of the length-normalised sequence ratio per turn (GSPO, SAMPO).', fn: gspo },
});
