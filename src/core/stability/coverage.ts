/**
 * Which detector rules can judge a run. A lab run logs every catalog key every step, but an
 * imported verl / TRL / W&B run carries only the keys its source logged: a TRL run has no zero-variance share,
 * a verl PPO run no KL loss, a W&B export may hold a single series. A rule whose metrics are absent does not
 * "pass" on that run — it is not applicable, and the run view says so instead of implying it watched.
 */
import { resolveDetectorConfig, type DetectorConfig } from './config';
import { RULES } from './rules/index';
import type { MetricNeeds, RuleDef, RuleId } from './types';

export interface RuleCoverage {
  readonly rule: RuleId;
  readonly title: string;
  /** The rule is enabled in `cfg` and the run has the metrics it needs. */
  readonly applicable: boolean;
  /** False when the detector config switches the rule off (then `applicable` is false whatever the keys). */
  readonly enabled: boolean;
  /**
   * Keys whose absence makes the rule not applicable: the absent `allOf` keys, or, when no `anyOf` key is
   * present, every `anyOf` key (any one of them would do). Empty when applicable or only disabled.
   */
  readonly missing: string[];
  /** Keys of the rule's needs that the run has (what it will read). */
  readonly present: string[];
  /** How the missing keys combine: 'all' (each one is needed) or 'any' (one of them suffices). */
  readonly needs: 'all' | 'any';
}

/** True when `have` satisfies `needs` (see MetricNeeds). */
export function needsMet(needs: MetricNeeds, have: ReadonlySet<string>): boolean {
  return check(needs, have).missing.length === 0;
}

function check(needs: MetricNeeds, have: ReadonlySet<string>): { missing: string[]; present: string[]; mode: 'all' | 'any' } {
  const all = needs.allOf ?? [];
  const any = needs.anyOf ?? [];
  const missing = all.filter((k) => !have.has(k));
  const present = all.filter((k) => have.has(k));
  if (any.length === 1 && any[0] === '*') {
    if (have.size === 0) missing.push('any metric');
  } else if (any.length > 0) {
    const found = any.filter((k) => have.has(k));
    present.push(...found);
    if (found.length === 0) missing.push(...any);
  }
  return { missing, present, mode: any.length > 0 && all.length === 0 ? 'any' : 'all' };
}

function coverageOf(def: RuleDef, have: ReadonlySet<string>, cfg: DetectorConfig): RuleCoverage {
  const enabled = def.enabled(cfg);
  const { missing, present, mode } = check(def.needs, have);
  return { rule: def.id, title: def.title, applicable: enabled && missing.length === 0, enabled, missing, present, needs: mode };
}

/**
 * One entry per rule of the catalog (catalog order): whether it applies to a run that logged `keys` (pass the
 * keys that have at least one value in the run; a key whose every value is NaN still counts as logged, because
 * `non_finite` reads it).
 */
export function ruleCoverage(keys: Iterable<string>, cfg: DetectorConfig = resolveDetectorConfig()): RuleCoverage[] {
  const have = new Set(keys);
  return RULES.map((def) => coverageOf(def, have, cfg));
}
