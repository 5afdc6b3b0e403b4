export { filteringActive, finishFiltering, isUniform, offerRound, startFiltering } from './dynamic';
export type { FilterParams, FilterState, RolledGroup } from './dynamic';
export { overlongPenalty } from './overlong';
