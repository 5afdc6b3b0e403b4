/**
 * What the Ladder view shows of a pressure ladder (`arlarena ladder --study NAME`, docs/guides/pressure-ladder.md):
 * its plan, one panel per pressure level, and per (env, level, cell) — a cell is a preset, or an arm (a named preset
 * + overrides) in a ladder of arms — the same statistics as the ladder's summary.json: the share of seeds that
 * collapsed with its exact 95 % interval, the Kaplan–Meier median collapse step and survival curve, the log-rank
 * test against the cell's baseline, the held-out success of the survivors, the rollout time per step; plus the run
 * behind every seed, so each curve and row links to its runs. A ladder still training (or stopped half-way) is
 * summarised over the runs that finished, and says which cells are incomplete.
 */
import { z } from 'zod';

const Ci = z.tuple([z.number(), z.number()]).nullable();
const Summary = z.object({ n: z.number().int(), mean: z.number().nullable(), ci95: Ci });

/** A ladder's name: the `--study NAME` its level studies (`NAME-p<level>`) were made with. */
export const LadderName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/, 'a ladder name is 1–40 letters, digits, ".", "_" or "-", starting with a letter or digit');

export const LadderRunRef = z.object({
  env: z.string(),
  level: z.number().int(),
  preset: z.string(),
  /** The run's arm in a ladder of arms; null for bare presets. */
  arm: z.string().nullable(),
  seed: z.number().int(),
  /** The run in the run store; null = not started yet. */
  runId: z.string().nullable(),
  /** The run's status in the store (the study's last record of it when the store does not have the run). */
  status: z.string().nullable(),
  /** Trained (and, unless stopped at its collapse, evaluated held-out): it counts in the cell's statistics. */
  done: z.boolean(),
  /** The last step it trained (done), or the last step it reached so far (training, stopped); null before it started. */
  step: z.number().int().nullable(),
  /** Done runs: the step it collapsed at (critical alert or held-out fall), null = it did not (censored at `step`). */
  collapseStep: z.number().int().nullable(),
  /** Done runs: held-out greedy success of the final policy (null for a run stopped at its collapse). */
  heldOut: z.number().nullable(),
  /** Why the ladder stopped it early (`collapsed at step S (…)`, stop-on-collapse); null otherwise. */
  stopReason: z.string().nullable(),
  /**
   * The run store of this data dir holds the run, so its page and Compare open it. False for a run known only by its
   * ledger line: a fresh clone has the committed ledger, not the runs, and a reused run was trained in another
   * study's data dir.
   */
  stored: z.boolean(),
  /** The run was trained by another study and its ledger line copied (reuse.ts): that study and its run id; null otherwise. */
  reusedFrom: z.object({ study: z.string(), runId: z.string() }).nullable(),
  /** Where a run this data dir lacks is known from and where its data is, in words; null for a stored or unstarted run. */
  where: z.string().nullable(),
});
export type LadderRunRef = z.infer<typeof LadderRunRef>;

export const LadderCell = z.object({
  env: z.string(),
  level: z.number().int(),
  preset: z.string(),
  /** The arm in a ladder of arms (the cell's name); null: the preset is the cell. */
  arm: z.string().nullable(),
  /** Planned seeds of the cell. */
  seeds: z.array(z.number().int()),
  /** Seeds with a result (the statistics below are over these). */
  done: z.number().int(),
  /** Every planned seed has a result. */
  complete: z.boolean(),
  collapsedShare: z.object({ collapsed: z.number().int(), n: z.number().int(), mean: z.number().nullable(), ci95: Ci }),
  /** Kaplan–Meier median collapse step; null = not reached (or no result yet). */
  medianCollapseStep: z.number().nullable(),
  /** Kaplan–Meier curve: pairs [step, share not yet collapsed]; empty without results. */
  survival: z.array(z.tuple([z.number(), z.number()])),
  /**
   * Log-rank test against the cell's baseline (`against`: the baseline preset, or the arm's `vs` arm) at the same
   * env and level, with the rollout speed-up over it (its rollout seconds per step ÷ this cell's); null for a
   * baseline itself, or while either has no result.
   */
  vsBaseline: z
    .object({
      logRankP: z.number(),
      /** The test statistic; null from a committed summary.json, which records only p and the verdict. */
      chiSquare: z.number().nullable(),
      verdict: z.string(),
      against: z.string(),
      rolloutSpeedup: z.number().nullable(),
    })
    .nullable(),
  /**
   * The baseline this cell is compared with (`against`) when it has no runs at the cell's env and level (a resume whose
   * ledger lost its lines, say): vsBaseline is then null for that reason, not because the cell is the baseline.
   * Absent otherwise (core/stats ladderRows' baselineMissing, summary.json's).
   */
  baselineMissing: z.string().optional(),
  /** Held-out greedy success of the seeds that did not collapse: mean and 95 % t interval. */
  heldOutSurvivors: Summary,
  /** Mean rollout seconds per RL step over the seeds (perf/rollout_s; measured, so it varies between repeats). */
  rolloutSecondsPerStep: Summary,
  runs: z.array(LadderRunRef),
  /** The cell's runs reused from other studies' ledgers, per study (empty: none, or a committed summary without its ledger). */
  reused: z.array(z.object({ study: z.string(), runs: z.number().int() })),
});
export type LadderCell = z.infer<typeof LadderCell>;

export const LadderLevel = z.object({
  level: z.number().int(),
  /** The level's arena study in the data dir (`NAME-p<level>`). */
  study: z.string(),
  /** The knobs the level sets for every preset, and why (src/core/config/pressure.ts). */
  overrides: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
  why: z.string(),
  /** The ladder has created the level's study (levels train one after the other). */
  started: z.boolean(),
  done: z.number().int(),
  planned: z.number().int(),
});
export type LadderLevel = z.infer<typeof LadderLevel>;

export const LadderArm = z.object({
  name: z.string(),
  preset: z.string(),
  sets: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  /** The arm it is compared with; null = a baseline. */
  vs: z.string().nullable(),
});
export type LadderArm = z.infer<typeof LadderArm>;

/**
 * Where a ladder comes from: its level studies in the data dir (runs, progress, links), or a summary committed in the
 * checkout (`resources/studies/NAME/summary.json`, as `arlarena ladder --study` writes it): the statistics only, its
 * runs not in this data dir.
 */
export const LadderSource = z.enum(['data', 'committed']);
export type LadderSource = z.infer<typeof LadderSource>;

/** One ladder in the list: enough to pick it. */
export const LadderListItem = z.object({
  name: z.string(),
  source: LadderSource,
  command: z.string(),
  /** When its first level study was created; null for a committed summary (it records no date). */
  createdAt: z.string().nullable(),
  levels: z.array(z.number().int()),
  envs: z.array(z.string()),
  /** The cells of each level: the presets, or the arms' names. */
  cells: z.array(z.string()),
  seeds: z.number().int(),
  done: z.number().int(),
  planned: z.number().int(),
  complete: z.boolean(),
  /** A committed summary.json that cannot be read: what is wrong with it (the file and the field); null otherwise. */
  problem: z.string().nullable(),
});
export type LadderListItem = z.infer<typeof LadderListItem>;

export const LadderInfo = z.object({
  name: z.string(),
  source: LadderSource,
  /** A committed ladder's summary file, relative to the checkout; null for a data-dir ladder. */
  summaryFile: z.string().nullable(),
  command: z.string(),
  createdAt: z.string().nullable(),
  baseline: z.string(),
  /** A held-out fall below this fraction of the step-0 validation counts as collapse. */
  fraction: z.number(),
  /** What counts as collapse, in words. */
  collapse: z.string(),
  /** Runs stop at their collapse (`--on-collapse stop`) or train on; with what that means, in words. */
  stopOnCollapse: z.boolean(),
  onCollapse: z.string(),
  envs: z.array(z.string()),
  presets: z.array(z.string()),
  /** The arms of a ladder of arms; null for bare presets. */
  arms: z.array(LadderArm).nullable(),
  seeds: z.array(z.number().int()),
  /** RL steps per run; null = each preset's own. */
  steps: z.number().int().nullable(),
  episodes: z.number().int(),
  levels: z.array(LadderLevel),
  /** Planned runs with a result / planned runs, over every level (started or not). */
  done: z.number().int(),
  planned: z.number().int(),
  complete: z.boolean(),
  /** One per (env, level, cell), in the order env → level → cell of the plan. */
  cells: z.array(LadderCell),
  /**
   * Runs taken from other studies' ledgers instead of trained (summary.json's `reused`: per study, its runs and cells
   * as `level L CELL · ENV seeds …`; `rule`: when a run counts as the same); null: none.
   */
  reused: z
    .object({
      runs: z.number().int(),
      rule: z.string().nullable(),
      from: z.array(z.object({ study: z.string(), runs: z.number().int(), cells: z.array(z.string()) })),
    })
    .nullable(),
  /**
   * The ladder's ledger (one line per finished run), as a path to show: beside a committed summary, or where the
   * command wrote it (`--out DIR`, else resources/studies); null for a committed summary that has none.
   */
  ledgerFile: z.string().nullable(),
  /** A committed ledger that cannot be read, or its torn last line: what is wrong (the runs are then listed without it); null: none. */
  ledgerProblem: z.string().nullable(),
  /** Runs with a result that this data dir's run store lacks (known by their ledger lines only). */
  notStored: z.number().int(),
});
export type LadderInfo = z.infer<typeof LadderInfo>;
