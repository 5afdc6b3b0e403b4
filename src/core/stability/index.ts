/** Collapse detection over metric streams (spec §4). Pure TypeScript. */
export { CollapseDetector, detectAlerts, type AlertUpdate } from './detector';
export { DEFAULT_DETECTOR_CONFIG, resolveDetectorConfig, type DetectorConfig, type DetectorConfigOverrides } from './config';
export { RULES, ruleById } from './rules/index';
export { hintsFor, recipeForRun, recipeOf, sourceRecipeOf, type Hints, type RunRecipe, type SourceRecipe } from './hints';
export type { Finding, MetricNeeds, RuleDef, RuleId, RuleInstance } from './types';
export { ruleCoverage, needsMet, type RuleCoverage } from './coverage';
export { syntheticStream, type SyntheticOptions, type SyntheticShape } from './synthetic';
export { reportableNonFinite, nonFiniteKind } from './nonFinite';
