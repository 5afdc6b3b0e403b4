/**
 * What the Study view shows of a study (`arlarena arena --study`, src/main/studies): its plan, one row per
 * (env, preset) with the held-out intervals and the paired verdict against the baseline (src/core/stats),
 * and the run behind every (env, preset, seed), so each cell links to its runs.
 */
import { z } from 'zod';

const Ci = z.tuple([z.number(), z.number()]).nullable();

export const StudyInterval = z.object({ mean: z.number().nullable(), ci95: Ci, n: z.number().int() });
export type StudyInterval = z.infer<typeof StudyInterval>;

export const StudyVersus = z.object({
  diff: z.number().nullable(),
  ci95: Ci,
  p: z.number().nullable(),
  verdict: z.string(),
  seedsFor80Power: z.number().int().nullable(),
});
export type StudyVersus = z.infer<typeof StudyVersus>;

export const StudyRow = z.object({
  env: z.string(),
  preset: z.string(),
  seeds: z.array(z.number().int()),
  steps: z.number().int(),
  heldOutGreedy: StudyInterval,
  heldOutSampled: StudyInterval,
  vsBaseline: StudyVersus.nullable(),
  criticalAlertShare: z.number(),
});
export type StudyRow = z.infer<typeof StudyRow>;

export const StudyRunRef = z.object({
  env: z.string(),
  preset: z.string(),
  seed: z.number().int(),
  runId: z.string().nullable(),
  status: z.string().nullable(),
  done: z.boolean(),
});
export type StudyRunRef = z.infer<typeof StudyRunRef>;

export const StudyInfo = z.object({
  name: z.string(),
  command: z.string(),
  createdAt: z.string(),
  baseline: z.string(),
  envs: z.array(z.string()),
  presets: z.array(z.string()),
  seeds: z.array(z.number().int()),
  steps: z.number().int().nullable(),
  episodes: z.number().int(),
  /** Planned runs with a result / planned runs. */
  done: z.number().int(),
  planned: z.number().int(),
  rows: z.array(StudyRow),
  runs: z.array(StudyRunRef),
});
export type StudyInfo = z.infer<typeof StudyInfo>;
