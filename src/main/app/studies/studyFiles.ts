/**
 * A study's persisted plan and progress: `<dataDir>/studies/<name>/study.json` holds the
 * plan (envs × presets × seeds × steps, the settings, the exact command) and, per planned run, its run id
 * in the run store and — once trained and evaluated — its outcome. Written atomically after every change,
 * so a study killed at any point resumes from what this file says: runs with an outcome are done, runs
 * with an id continue from their latest checkpoint, the rest start fresh.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { removeDeadTempsIn, writeFileAtomic } from '../../store/atomic';

// At most 40 characters, so the runs' tag `study:<name>` stays within the 50 characters a run tag may have.
const STUDY_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

const Outcome = z.object({
  env: z.string(),
  preset: z.string(),
  seed: z.number().int(),
  steps: z.number().int(),
  heldOutGreedy: z.number().nullable(),
  heldOutSampled: z.number().nullable(),
  finalTrainSuccess: z.number().nullable(),
  bestTrainSuccess: z.number().nullable(),
  firstCriticalStep: z.number().int().nullable(),
  stepsToThreshold: z.number().int().nullable(),
});

/** One arm of a study of arms (arms.ts parses them from `NAME=PRESET[;KEY=VALUE…][ vs BASELINE]`). */
export const Arm = z.object({
  name: z.string(),
  preset: z.string(),
  /** Config overrides of this arm (after the study's --set). */
  sets: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  /** The arm it is compared with; null = a baseline. */
  vs: z.string().nullable(),
});
export type Arm = z.infer<typeof Arm>;

export const StudyPlan = z.object({
  /** The command line that created the study, as typed (resume reuses the plan, not new flags). */
  command: z.string(),
  envs: z.array(z.string()).min(1),
  presets: z.array(z.string()).min(1),
  seeds: z.array(z.number().int()).min(1),
  /** RL steps per run; null = each preset's training.steps. */
  steps: z.number().int().nullable(),
  model: z.string().nullable(),
  /** `--set` overrides applied to every run. */
  sets: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  baseline: z.string(),
  /** Held-out tasks per evaluation (greedy and sampled). */
  episodes: z.number().int().min(1),
  /** Training-success threshold for "steps to threshold". */
  threshold: z.number(),
  /**
   * Stop each run at its collapse (collapseWatch.ts: first critical alert, or the first validation whose held-out
   * success fell below `fraction` × its step-0 validation); such a run is not evaluated held-out. Absent or null:
   * every run trains to its last step (studies stored before this field).
   */
  stopOnCollapse: z
    .object({ fraction: z.number().gt(0).lt(1) })
    .nullable()
    .optional(),
  /**
   * Named arms (arms.ts: preset + overrides, each compared with its `vs`) instead of bare presets: every entry then
   * names its arm, and `presets` lists the arms' presets. Absent: the entries are the presets themselves.
   */
  arms: z.array(Arm).optional(),
});
export type StudyPlan = z.infer<typeof StudyPlan>;

export const StudyEntry = z.object({
  env: z.string(),
  preset: z.string(),
  /** The arm this run belongs to (plan.arms); absent in a study of bare presets. */
  arm: z.string().optional(),
  seed: z.number().int(),
  runId: z.string().nullable(),
  /** The run's status when last seen by the study. */
  status: z.string().nullable(),
  /** Training wall seconds (not part of the summary: it differs between an interrupted and a clean study). */
  wallSeconds: z.number().nullable(),
  outcome: Outcome.nullable(),
  /** Why the run was stopped early: `collapsed at step S (…)` (stop-on-collapse); absent or null otherwise. */
  stopReason: z.string().nullable().optional(),
  /**
   * A ladder run taken as done from the committed ledger (ledger.ts): its run is not in this data dir, so its ladder
   * figures come from here, not from its metrics. Absent for runs trained in this data dir.
   */
  ledger: z
    .object({ collapseStep: z.number().int().nullable(), rolloutSeconds: z.number().nullable(), rolloutMismatch: z.number().nullable() })
    .optional(),
  /** A ledger run another study trained (its line's reusedFrom, reuse.ts): that study and its run id. */
  reusedFrom: z.object({ study: z.string(), runId: z.string() }).optional(),
});
export type StudyEntry = z.infer<typeof StudyEntry>;

export const StudyState = z.object({
  version: z.literal(1),
  name: z.string(),
  createdAt: z.string(),
  plan: StudyPlan,
  entries: z.array(StudyEntry),
  /**
   * A ladder level's (ladder.ts): the folder its ladder's ledger, summary.json and README.md are written to, absolute,
   * as of the ladder's latest run — a resume with another --out moves them, and the command the plan keeps is the
   * first one. Absent in other studies and in levels written before it was kept (their command's --out says).
   */
  reportDir: z.string().optional(),
});
export type StudyState = z.infer<typeof StudyState>;

export function studiesDir(dataDir: string): string {
  return join(dataDir, 'studies');
}

export function studyFile(dataDir: string, name: string): string {
  return join(studiesDir(dataDir), name, 'study.json');
}

/** A study name or an error message saying what is allowed. */
export function checkStudyName(name: string): string | null {
  return STUDY_NAME_RE.test(name)
    ? null
    : `study name ${JSON.stringify(name)}: use 1–40 letters, digits, '.', '_' or '-', starting with a letter or digit`;
}

export function studyExists(dataDir: string, name: string): boolean {
  return existsSync(studyFile(dataDir, name));
}

export async function readStudy(dataDir: string, name: string): Promise<StudyState> {
  const file = studyFile(dataDir, name);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: cannot read the study (${(e as Error).message})`);
  }
  const parsed = StudyState.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new Error(`${file}: not a study file: ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return parsed.data;
}

export async function writeStudy(dataDir: string, state: StudyState): Promise<void> {
  const file = studyFile(dataDir, state.name);
  await mkdir(join(studiesDir(dataDir), state.name), { recursive: true });
  // the temp files of writes a kill cut short, once their writer is gone (a live, stalled write's stays)
  await removeDeadTempsIn(dirname(file));
  await writeFileAtomic(file, `${JSON.stringify(state, null, 1)}\n`);
}

/** Every study in the data dir (unreadable ones skipped), by name. */
export async function listStudies(dataDir: string): Promise<StudyState[]> {
  const dir = studiesDir(dataDir);
  if (!existsSync(dir)) return [];
  const out: StudyState[] = [];
  for (const e of (await readdir(dir, { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()) {
    if (!existsSync(studyFile(dataDir, e))) continue;
    try {
      out.push(await readStudy(dataDir, e));
    } catch {
      // a half-written or foreign folder: not a study
    }
  }
  return out;
}
