/**
 * A pressure ladder's committed ledger: `resources/studies/NAME/ledger.jsonl`, beside the summary.json and README.md
 * `arlarena ladder --study NAME` writes. The data dir holds the runs and each level's study.json, and does not move
 * with a clone; the ledger does: one line per finished run with what the summary needs (its collapse or censoring
 * step, held-out success, rollout seconds and engine gap) and what tells whether a rerun would be the same run (the
 * config hash, the app version and commit, the backend and worker count it trained on). So the summary can be
 * computed from the ledger alone, and `--resume` on a fresh clone takes the ledger's runs as done and trains only
 * the rest.
 *
 * Format (JSON Lines, UTF-8): line 1 is the header (kind, version, ladder name, the plan the runs were trained
 * under); every further line is one run, sorted by level, env, cell (the plan's order of presets or arms) and seed,
 * so a rewrite after each run changes one line of a diff. The file is rewritten whole through the store's atomic
 * writer (never appended), so a crash leaves the old or the new file. A last line that is not a whole record (a
 * copy cut short, a hand edit) is left out and reported — its run trains again —; a bad line elsewhere (a merge
 * conflict's marker) is refused with its line number.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { LadderRunOutcome } from '../../../core/stats/index';
import type { ComputeBackendInfo } from '../../../shared/api';
import { removeDeadTempsIn, writeFileAtomic } from '../../store/atomic';
import type { LadderPlan } from './ladder';
import { Arm, type StudyEntry } from './studyFiles';

export const LEDGER_FILE = 'ledger.jsonl';
const KIND = 'arlarena-ladder-ledger';

const Value = z.union([z.string(), z.number(), z.boolean()]);
const Step = z.number().int().min(0);

/** What the runs were trained under: a resume with another plan is refused (ledgerPlanMismatches). */
export const LedgerPlan = z.object({
  /** The command that started the ladder, as typed. */
  command: z.string(),
  /** The levels planned so far (a later --levels adds to them). */
  levels: z.array(z.number().int()).min(1),
  envs: z.array(z.string()).min(1),
  presets: z.array(z.string()).min(1),
  arms: z.array(Arm).nullable(),
  seeds: z.array(z.number().int()).min(1),
  steps: z.number().int().nullable(),
  model: z.string().nullable(),
  /** The ladder's --set (the level's training.pressure is not in it). */
  sets: z.record(z.string(), Value),
  baseline: z.string(),
  episodes: z.number().int().min(1),
  fraction: z.number().gt(0).lt(1),
  stopOnCollapse: z.boolean(),
});
export type LedgerPlan = z.infer<typeof LedgerPlan>;

const Header = z.object({ kind: z.literal(KIND), version: z.literal(1), name: z.string(), plan: LedgerPlan });
export type LedgerHeader = z.infer<typeof Header>;

/**
 * The backend a run trained on, as its run record's backend names it (ComputeBackendInfo): the tfjs training backend
 * (`tensorflow`, `wasm`, …), the rollout engine (`onnxruntime-cpu`, `onnxruntime-cpu-int8`, `tfjs-wasm`, …) and K,
 * its gradient workers.
 */
export const LedgerBackend = z.object({ training: z.string(), rollout: z.string(), workers: z.number().int().positive() });
export type LedgerBackend = z.infer<typeof LedgerBackend>;

/**
 * A run record's backend as a ledger line keeps it; null when the record does not say (`unknown`: a run whose
 * trainer never reported it). A record without `workers` was made before runs recorded K, when every run trained on
 * one thread (trainer.ts workersOf; reproduce.ts reads it the same way): K = 1.
 */
export function ledgerBackendOf(b: Pick<ComputeBackendInfo, 'training' | 'rollout' | 'workers'>): LedgerBackend | null {
  if (!b.training || !b.rollout || b.training === 'unknown' || b.rollout === 'unknown') return null;
  return { training: b.training, rollout: b.rollout, workers: b.workers ?? 1 };
}

/** One finished run (completed, or stopped at its collapse). */
export const LedgerRecord = z.object({
  level: z.number().int(),
  env: z.string(),
  preset: z.string(),
  arm: z.string().optional(),
  seed: z.number().int(),
  runId: z.string(),
  /**
   * The run was trained by another study (its ledger held the same run: config hash, seed, major version; reuse.ts)
   * and its line copied from there, not trained again; runId is that study's run. Absent for runs this ladder trained.
   */
  reusedFrom: z.object({ study: z.string(), runId: z.string() }).optional(),
  status: z.enum(['completed', 'stopped']),
  /** RL steps run (the last step logged). */
  steps: Step,
  /** The ladder's collapse step (critical alert or held-out fall); null: censored at `censoredAt`. */
  collapseStep: Step.nullable(),
  censoredAt: Step.nullable(),
  /** Why it counts as collapsed: the stop reason of a run stopped at its collapse, else which signal came first. */
  collapseReason: z.string().nullable(),
  heldOutGreedy: z.number().nullable(),
  heldOutSampled: z.number().nullable(),
  finalTrainSuccess: z.number().nullable(),
  bestTrainSuccess: z.number().nullable(),
  firstCriticalStep: Step.nullable(),
  stepsToThreshold: Step.nullable(),
  /** Mean perf/rollout_s over the RL steps; the run's mean mismatch/logprob_abs_mean (null when not logged). */
  rolloutSecondsPerStep: z.number().nullable(),
  rolloutMismatch: z.number().nullable(),
  wallSeconds: z.number().nullable(),
  /** The lab that created the run (its run record's appVersion and appCommit). */
  appVersion: z.string(),
  appCommit: z.string(),
  /**
   * What the run trained on (its run record's backend: compute.backend = auto and compute.workers = 0 resolve on the
   * machine that trains); another study reuses the line only for a run that would train on the same (reuse.ts).
   * Absent in lines written before ledgers recorded it — --export-ledger from the data dir that holds the run fills
   * it — and for a run whose record has no backend.
   */
  backend: LedgerBackend.optional(),
  /** configHash of the run's resolved config (as stored in its run record). */
  configHash: z.string(),
});
export type LedgerRecord = z.infer<typeof LedgerRecord>;

export interface Ledger {
  readonly file: string;
  readonly header: LedgerHeader;
  readonly records: readonly LedgerRecord[];
  /** The torn last line left out, said in words (null: none). */
  readonly torn: string | null;
}

/** Thrown for a ledger that cannot be used as it is; the message names the file, the line and the fix. */
export class LedgerError extends Error {
  readonly expected = true;
}

export const ledgerFile = (dir: string): string => join(dir, LEDGER_FILE);

/** A run's place in the ladder: level, env, cell (arm or preset), seed. */
export const ledgerKey = (r: { level: number; env: string; preset: string; arm?: string; seed: number }): string =>
  JSON.stringify([r.level, r.env, r.arm ?? r.preset, r.seed]);

/** JSON with every object's keys sorted: the same config gives the same text whatever order its keys were built in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** sha256 of a resolved run config's canonical JSON, first 16 hex digits (64 bits: a changed config, not a secret). */
export function configHash(config: unknown): string {
  return `sha256:${createHash('sha256').update(canonical(config)).digest('hex').slice(0, 16)}`;
}

/** The plan as the ledger's header keeps it. */
export function ledgerPlanOf(plan: LadderPlan, levels: readonly number[] = plan.levels): LedgerPlan {
  return {
    command: plan.command,
    levels: [...new Set(levels)].sort((a, b) => a - b),
    envs: [...plan.envs],
    presets: [...plan.presets],
    arms: plan.arms ? plan.arms.map((a) => ({ ...a, sets: { ...a.sets } })) : null,
    seeds: [...plan.seeds],
    steps: plan.steps,
    model: plan.model,
    sets: { ...plan.sets },
    baseline: plan.baseline,
    episodes: plan.episodes,
    fraction: plan.fraction,
    stopOnCollapse: plan.stopOnCollapse,
  };
}

const cellsOf = (p: Pick<LedgerPlan, 'arms' | 'presets'>): string[] => (p.arms ? p.arms.map((a) => a.name) : [...p.presets]);

/** Records in the ledger's order: level, env and cell in the plan's order, seed. */
export function sortRecords(plan: Pick<LedgerPlan, 'envs' | 'arms' | 'presets'>, records: readonly LedgerRecord[]): LedgerRecord[] {
  const envs = plan.envs;
  const cells = cellsOf(plan);
  const rank = (xs: readonly string[], x: string) => (xs.includes(x) ? xs.indexOf(x) : xs.length);
  return [...records].sort(
    (a, b) =>
      a.level - b.level ||
      rank(envs, a.env) - rank(envs, b.env) ||
      a.env.localeCompare(b.env) ||
      rank(cells, a.arm ?? a.preset) - rank(cells, b.arm ?? b.preset) ||
      (a.arm ?? a.preset).localeCompare(b.arm ?? b.preset) ||
      a.seed - b.seed,
  );
}

/** A record's line, keys in the schema's order (a stable text for diffs). */
function recordLine(r: LedgerRecord): string {
  const keys = Object.keys(LedgerRecord.shape) as Array<keyof LedgerRecord>;
  return JSON.stringify(Object.fromEntries(keys.filter((k) => r[k] !== undefined).map((k) => [k, r[k]])));
}

export function ledgerText(header: LedgerHeader, records: readonly LedgerRecord[]): string {
  return `${[JSON.stringify(header), ...sortRecords(header.plan, records).map(recordLine)].join('\n')}\n`;
}

/**
 * Write the ledger whole (atomic: a reader sees the old file or the new one). The temp file a killed write left
 * beside it (in a committed folder, where `git add` of the folder would take it along) goes first.
 */
export async function writeLedger(dir: string, header: LedgerHeader, records: readonly LedgerRecord[]): Promise<void> {
  await removeDeadTempsIn(dir);
  await writeFileAtomic(ledgerFile(dir), ledgerText(header, records));
}

const issueOf = (e: z.ZodError) => {
  const i = e.issues[0];
  return `${i.path.join('.') || '(line)'}: ${i.message}`;
};

/**
 * Parse a ledger's text (`file` names it in messages). A torn last line is left out and said in `torn`; a bad
 * header or a bad line before the last, or two different records of one run, throw a LedgerError with the fix.
 */
export function parseLedger(text: string, file: string): Ledger {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const fix = 'restore it from git (git checkout -- the file) or delete the line, then run again';
  type Parsed = { ok: true; value: unknown } | { ok: false; why: string };
  const parse = (line: string): Parsed => {
    try {
      return { ok: true, value: JSON.parse(line) };
    } catch (e) {
      return { ok: false, why: `not JSON (${(e as Error).message})` };
    }
  };
  if (lines.length === 0) throw new LedgerError(`${file}: empty (no header line); delete the file, or restore it from git`);
  const h = parse(lines[0]);
  const header = h.ok ? Header.safeParse(h.value) : null;
  if (!header?.success)
    throw new LedgerError(`${file} line 1: not a ladder ledger's header (${h.ok ? issueOf(header!.error!) : h.why}); ${fix}`);
  const records: LedgerRecord[] = [];
  const lineOf = new Map<string, number>();
  let torn: string | null = null;
  for (let i = 1; i < lines.length; i++) {
    const p = parse(lines[i]);
    const r = p.ok ? LedgerRecord.safeParse(p.value) : null;
    if (!r?.success) {
      const why = p.ok ? `not a run record (${issueOf(r!.error!)})` : p.why;
      if (i === lines.length - 1) {
        torn = `${file} line ${i + 1} (the last) is not a whole run record (${why}): left out, so its run trains again; the next write of the ledger drops the line`;
        break;
      }
      throw new LedgerError(`${file} line ${i + 1}: ${why}; ${fix}`);
    }
    const key = ledgerKey(r.data);
    const seen = lineOf.get(key);
    if (seen !== undefined) {
      const prev = records.find((x) => ledgerKey(x) === key)!;
      if (recordLine(prev) === recordLine(r.data)) continue;
      throw new LedgerError(
        `${file} lines ${seen} and ${i + 1}: two records of ${r.data.arm ?? r.data.preset} · ${r.data.env} · seed ${r.data.seed} at level ${r.data.level} (runs ${prev.runId} and ${r.data.runId}); keep the one you trust and delete the other`,
      );
    }
    lineOf.set(key, i + 1);
    records.push(r.data);
  }
  return { file, header: header.data, records, torn };
}

/** The ledger in `dir`, or null when there is none. */
export async function readLedger(dir: string): Promise<Ledger | null> {
  const file = ledgerFile(dir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LedgerError(`${file}: cannot read the ledger (${(e as Error).message})`);
  }
  return parseLedger(text, file);
}

const seedsText = (s: readonly number[]) => {
  const contiguous = s.length > 2 && s.every((x, i) => i === 0 || x === s[i - 1] + 1);
  return contiguous ? `${s[0]}..${s[s.length - 1]}` : s.join(',');
};

/**
 * What differs between the plan the ledger's runs were trained under and this command's (levels may grow): one
 * phrase per field, empty when the plans agree.
 */
export function ledgerPlanMismatches(ledger: LedgerPlan, plan: LedgerPlan): string[] {
  const out: string[] = [];
  const text: Record<string, (p: LedgerPlan) => string> = {
    envs: (p) => p.envs.join(','),
    presets: (p) => p.presets.join(','),
    arms: (p) => (p.arms ? p.arms.map((a) => `${a.name}=${a.preset}${canonical(a.sets)} vs ${a.vs ?? '-'}`).join(' ') : 'none'),
    seeds: (p) => seedsText(p.seeds),
    steps: (p) => String(p.steps ?? "each preset's"),
    model: (p) => p.model ?? "each preset's",
    sets: (p) =>
      Object.keys(p.sets).length === 0
        ? 'none'
        : Object.keys(p.sets)
            .sort()
            .map((k) => `${k}=${p.sets[k]}`)
            .join(' '),
    baseline: (p) => p.baseline,
    episodes: (p) => String(p.episodes),
    fraction: (p) => String(p.fraction),
    'on-collapse': (p) => (p.stopOnCollapse ? 'stop' : 'continue'),
  };
  for (const [field, f] of Object.entries(text)) {
    const a = f(ledger);
    const b = f(plan);
    if (a !== b) out.push(`${field} ${a} in the ledger, ${b} here`);
  }
  return out;
}

export const majorOf = (version: string): number => Number(/^(\d+)\./.exec(version)?.[1] ?? NaN);

/** The ladder figures of a ledger run, as the statistics take them (the same as from its stored metrics). */
export function outcomeOfRecord(r: LedgerRecord): LadderRunOutcome {
  return {
    env: r.env,
    preset: r.preset,
    ...(r.arm !== undefined ? { arm: r.arm } : {}),
    level: r.level,
    seed: r.seed,
    lastStep: r.steps,
    collapseStep: r.collapseStep,
    heldOut: r.heldOutGreedy,
    rolloutSeconds: r.rolloutSecondsPerStep,
    rolloutMismatch: r.rolloutMismatch,
  };
}

/** A study entry done by a ledger run (its run is not in this data dir: `ledger` carries its ladder figures). */
export function entryOfRecord(r: LedgerRecord): StudyEntry {
  return {
    env: r.env,
    preset: r.preset,
    ...(r.arm !== undefined ? { arm: r.arm } : {}),
    seed: r.seed,
    runId: r.runId,
    status: r.status,
    wallSeconds: r.wallSeconds,
    outcome: {
      env: r.env,
      preset: r.preset,
      seed: r.seed,
      steps: r.steps,
      heldOutGreedy: r.heldOutGreedy,
      heldOutSampled: r.heldOutSampled,
      finalTrainSuccess: r.finalTrainSuccess,
      bestTrainSuccess: r.bestTrainSuccess,
      firstCriticalStep: r.firstCriticalStep,
      stepsToThreshold: r.stepsToThreshold,
    },
    ...(r.status === 'stopped' ? { stopReason: r.collapseReason } : {}),
    ledger: { collapseStep: r.collapseStep, rolloutSeconds: r.rolloutSecondsPerStep, rolloutMismatch: r.rolloutMismatch },
    ...(r.reusedFrom ? { reusedFrom: { ...r.reusedFrom } } : {}),
  };
}

/**
 * The record of a finished run from its study entry, its ladder figures (`outcome`, as ladder.ts ladderRun computes them
 * from the stored metrics) and its run record's provenance.
 */
export function recordOf(
  e: StudyEntry,
  outcome: LadderRunOutcome,
  run: { appVersion: string; appCommit: string; config: unknown; backend: ComputeBackendInfo },
  fraction: number,
): LedgerRecord {
  const backend = ledgerBackendOf(run.backend);
  const out = e.outcome!;
  const status = e.status === 'stopped' ? 'stopped' : 'completed';
  const c = outcome.collapseStep;
  const reason =
    c === null
      ? null
      : (e.stopReason ??
        (out.firstCriticalStep === c
          ? `first critical alert at step ${c}`
          : `held-out success fell below ${fraction} × the step-0 validation at step ${c}`));
  return {
    level: outcome.level,
    env: e.env,
    preset: e.preset,
    ...(e.arm !== undefined ? { arm: e.arm } : {}),
    seed: e.seed,
    runId: e.runId!,
    status,
    steps: outcome.lastStep,
    collapseStep: c,
    censoredAt: c === null ? outcome.lastStep : null,
    collapseReason: reason,
    heldOutGreedy: out.heldOutGreedy,
    heldOutSampled: out.heldOutSampled,
    finalTrainSuccess: out.finalTrainSuccess,
    bestTrainSuccess: out.bestTrainSuccess,
    firstCriticalStep: out.firstCriticalStep,
    stepsToThreshold: out.stepsToThreshold,
    rolloutSecondsPerStep: outcome.rolloutSeconds ?? null,
    rolloutMismatch: outcome.rolloutMismatch ?? null,
    wallSeconds: e.wallSeconds,
    appVersion: run.appVersion,
    appCommit: run.appCommit,
    ...(backend ? { backend } : {}),
    configHash: configHash(run.config),
  };
}

/** A new header for ladder `name` under `plan`, keeping the levels an earlier header planned. */
export function ledgerHeader(name: string, plan: LadderPlan, before: LedgerHeader | null): LedgerHeader {
  return {
    kind: KIND,
    version: 1,
    name,
    plan: ledgerPlanOf({ ...plan, command: before?.plan.command ?? plan.command }, [...(before?.plan.levels ?? []), ...plan.levels]),
  };
}
