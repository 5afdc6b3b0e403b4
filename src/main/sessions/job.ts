/**
 * What a training worker runs: a `TrainingJob`. Production is jobs/training.ts (the real trainer,
 * `runTraining` from src/core/training); tests inject a small deterministic job through the session manager's worker spawner.
 */
import type { TrainerCheckpoint, TrainerHooks } from '../../core/training/types';
import type { ComputeBackendInfo, HfModelRecord } from '../../shared/api';

export interface JobInput {
  readonly runId: string;
  readonly config: Record<string, unknown>;
  readonly seed: number;
  readonly dataDir: string;
}

export interface JobResult {
  readonly status: 'completed' | 'stopped';
  readonly step: number;
  /** The run's backend record (what ComputeBackendInfo holds, less the machine's available list). */
  readonly backend?: Omit<ComputeBackendInfo, 'available'>;
  /** A Hugging Face model run's base model (RunRecord.model); absent for lab models. */
  readonly model?: HfModelRecord;
}

/** What a job reports while it runs, for the host to record at once (a run that fails later still has it). */
export interface JobReport {
  /** A Hugging Face model run's base model, once its folder is read; the result's `model` stays the final word. */
  model(record: HfModelRecord): void;
}

export interface TrainingJob {
  run(input: JobInput, hooks: TrainerHooks, resume?: TrainerCheckpoint, report?: JobReport): Promise<JobResult>;
}
