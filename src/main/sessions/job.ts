/**
 * What a training worker runs: a `TrainingJob`. Production is jobs/training.ts (the real trainer,
 * `runTraining` from src/core/training); tests inject small deterministic jobs (testJobs/) by module path.
 */
import type { TrainerCheckpoint, TrainerHooks } from '../../core/training/types';

export interface JobInput {
  readonly runId: string;
  readonly config: Record<string, unknown>;
  readonly seed: number;
  readonly dataDir: string;
}

export interface JobResult {
  readonly status: 'completed' | 'stopped';
  readonly step: number;
  readonly backend?: { readonly training: string; readonly rollout: string; readonly detail: string; readonly workers?: number };
}

export interface TrainingJob {
  run(input: JobInput, hooks: TrainerHooks, resume?: TrainerCheckpoint): Promise<JobResult>;
}

/** Load a job module (exporting `run`) by file path or URL. */
export async function loadJobModule(spec: string): Promise<TrainingJob> {
  const url = spec.startsWith('file:') ? spec : (await import('node:url')).pathToFileURL(spec).href;
  const mod = (await import(url)) as Partial<TrainingJob> & { default?: Partial<TrainingJob> };
  const run = mod.run ?? mod.default?.run;
  if (typeof run !== 'function') throw new Error(`job module ${spec} does not export run(input, hooks, resume)`);
  return { run };
}
