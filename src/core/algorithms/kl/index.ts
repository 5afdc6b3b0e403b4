import { makeCatalog } from '../catalog';
import { absKl } from './abs';
import { k1 } from './kl';
import { k3 } from './low-var-kl';
import { k2 } from './mse';
import type { KlFn, KlName } from './types';

export type { KlFn, KlName } from './types';
export { entropyFromLogits } from './entropy';

/** KL-to-reference estimators (the stability recipe's auxiliary KL loss, spec §2.1–§2.2). */
export const KL_ESTIMATORS = makeCatalog<KlName, KlFn>('KL estimator', {
  kl: { name: 'kl', summary: 'k1: log π_θ − log π_ref.', fn: k1 },
  abs: { name: 'abs', summary: '|log π_θ − log π_ref|.', fn: absKl },
  mse: { name: 'mse', summary: 'k2: ½(log π_θ − log π_ref)².', fn: k2 },
  low_var_kl: { name: 'low_var_kl', summary: 'k3: e^Δ − Δ − 1 with Δ = log π_ref − log π_θ, clamped (paper default).', fn: k3 },
});
