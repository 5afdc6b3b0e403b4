import { grpo } from './grpo';
import type { AdvantageFn } from './types';

/** `drgrpo` (Dr.GRPO, spec §1.3a): A_r = S_r − μ_u, no division by the std. */
export const drgrpo: AdvantageFn = (rows, p) => grpo(rows, { ...p, normByStd: false });
