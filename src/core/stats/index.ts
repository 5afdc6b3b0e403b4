export { ALPHA, Z_80, Z_975, pairedComparison, seedsFor80Power, signFlipP, summarize, tCritical } from './paired';
export type { PairedComparison, SampleSummary, Verdict } from './paired';
export { arenaCells, firstCriticalStep, trainingOutcome } from './arena';
export type { ArenaCell, ArenaRunOutcome } from './arena';
export { clopperPearson, collapseStep, collapsedShare, kaplanMeier, logRank, medianCollapseStep } from './survival';
export type { LogRank, ShareInterval, SurvivalRun, SurvivalVerdict } from './survival';
export { FLOAT_TOLERANCE, compareStreams, verdictLabel, withinTolerance } from './reproduce';
export type { ComparisonReport, KeyComparison, ReproduceVerdict, Tolerance } from './reproduce';
