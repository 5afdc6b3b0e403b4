/** The run database's public surface. */
export { RunStore, buildSeries, toSummary, UNKNOWN_BACKEND } from './runStore';
export type { CreateRunInput, RunPatch, RunQuery, SeriesOptions, XAxisName } from './runStore';
export { RunFiles, KEEP_CHECKPOINTS, type StoredCheckpoint } from './runFiles';
export { writeSyntheticRun } from './synthetic';
export { encodeMetricRecord, decodeMetricRecord, readJsonl, repairTornTail } from './jsonl';
export { writeFileAtomic } from './atomic';
