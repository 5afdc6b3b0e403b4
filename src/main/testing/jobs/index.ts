/**
 * The synthetic stand-in job for tests, in the shapes the product takes it: worker spawner + config check for a
 * SessionManager (spread into its options, or a CliContext's `jobs`), and the job itself for reproduceBundle.
 */
import { threadWorkerSpawner, type SpawnWorker } from '../../sessions/workerHost';
import type { TrainingJob } from '../../sessions/job';
import { syntheticJob } from './synthetic';

/** The synthetic job takes any object as its config (its fields are documented in synthetic.ts). */
const anyConfig = (): [] => [];

export function syntheticJobs(): { spawn: SpawnWorker; validateConfig: typeof anyConfig } {
  return { spawn: threadWorkerSpawner(new URL('./worker.ts', import.meta.url)), validateConfig: anyConfig };
}

export const syntheticRerun: { job: TrainingJob; validateConfig: typeof anyConfig } = { job: syntheticJob, validateConfig: anyConfig };
