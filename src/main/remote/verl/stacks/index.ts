/** The closed catalog of verl stacks the hand-off writes launches for; the paper's own code first (the default). */
import type { VerlStackDef, VerlStackName } from '../types';
import { ARLARENA } from './arlarena';
import { VERL_AGENT } from './verlAgent';

export const VERL_STACKS: Readonly<Record<VerlStackName, VerlStackDef>> = { arlarena: ARLARENA, 'verl-agent': VERL_AGENT };
export const VERL_STACK_NAMES = Object.keys(VERL_STACKS) as VerlStackName[];
export const DEFAULT_VERL_STACK: VerlStackName = 'arlarena';

/** The stack by name, or an error naming the known ones. */
export function verlStack(name: string): VerlStackDef {
  const s = (VERL_STACKS as Record<string, VerlStackDef | undefined>)[name];
  if (!s) throw new Error(`unknown verl stack "${name}"; known stacks: ${VERL_STACK_NAMES.join(', ')} (default ${DEFAULT_VERL_STACK})`);
  return s;
}
