/** The closed catalog of collapse rules (one file each). */
import type { RuleDef, RuleId } from '../types';
import { nonFiniteRule } from './nonFinite';
import { gradNormSpikeRule } from './gradNormSpike';
import { validityDropRule } from './validityDrop';
import { successCollapseRule } from './successCollapse';
import { entropyShiftRule } from './entropyShift';
import { klDriftRule } from './klDrift';
import { clipFractionDriftRule } from './clipFractionDrift';
import { deadSignalRule } from './deadSignal';
import { lengthRunawayRule } from './lengthRunaway';
import { trainInferenceMismatchRule } from './trainInferenceMismatch';
import { engineGapRule } from './engineGap';
import { responseCollapseRule } from './responseCollapse';
import { formatHackingRule } from './formatHacking';

export const RULES: readonly RuleDef[] = [
  nonFiniteRule,
  gradNormSpikeRule,
  validityDropRule,
  successCollapseRule,
  entropyShiftRule,
  klDriftRule,
  clipFractionDriftRule,
  deadSignalRule,
  lengthRunawayRule,
  trainInferenceMismatchRule,
  engineGapRule,
  responseCollapseRule,
  formatHackingRule,
];

export function ruleById(id: string): RuleDef {
  const r = RULES.find((x) => x.id === id);
  if (!r) throw new Error(`unknown detector rule "${id}"; known rules: ${RULES.map((x) => x.id).join(', ')}`);
  return r;
}

export type { RuleId };
