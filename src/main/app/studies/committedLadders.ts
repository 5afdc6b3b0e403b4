/**
 * Pressure ladders committed in the checkout, as the Ladder view shows them: `resources/studies/NAME/summary.json`
 * written by `arlarena ladder --study NAME` (ladderSummary in ladder.ts). A fresh clone has no runs, so these carry
 * the statistics — the curves, the table, the levels' knobs as they were when the study ran — and, from the ledger
 * committed beside the summary (ledger.jsonl, ledger.ts), each run's line: its seed, outcome, collapse step and
 * held-out success, and whether it was reused from another study's ledger (`reusedFrom`). Those runs are not in this
 * data dir as a rule (withStored marks the ones that are, so the view links only those).
 *
 * What the summary does not record is read from its command line (`--steps`, `--episodes`, `--fraction`), with
 * `arlarena ladder`'s defaults where it does not say; `seeds` is the union of the rows' seed lists. A summary of
 * another kind (an arena study's) is not a ladder and is left out; a ladder summary that does not parse is listed
 * with its problem (the file and the field), not shown. A summary written from the ladder's ledger before the ladder
 * finished (its `progress`: runs done of planned per level) shows its unfinished levels and their cells as such.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { LadderCell, LadderInfo, LadderListItem, LadderRunRef } from '../../../shared/ladders';
import { LADDER_CLI_DEFAULTS, flagValue, ladderCommandPlan, notStoredWhere, reusedOf, reusedOfRefs } from './ladderInfo';
import { LEDGER_FILE, readLedger, type Ledger } from './ledger';

const Ci = z.tuple([z.number(), z.number()]).nullable();
const Summary = z.object({ n: z.number().int(), mean: z.number().nullable(), ci95: Ci });
const Value = z.union([z.number(), z.string(), z.boolean()]);

/** The fields of a ladder summary.json the view reads (older summaries lack arms, onCollapse and rollout timing). */
const LadderSummaryFile = z.object({
  kind: z.literal('ladder'),
  name: z.string(),
  command: z.string(),
  collapse: z.string(),
  baseline: z.string(),
  onCollapse: z.string().optional(),
  levels: z.array(z.object({ level: z.number().int(), overrides: z.record(z.string(), Value), why: z.string() })),
  arms: z
    .array(z.object({ name: z.string(), preset: z.string(), sets: z.record(z.string(), Value), vs: z.string().nullable() }))
    .nullable()
    .optional(),
  rows: z.array(
    z.object({
      env: z.string(),
      preset: z.string(),
      arm: z.string().optional(),
      level: z.number().int(),
      seeds: z.number().int(),
      seedList: z.array(z.number().int()),
      collapsedShare: z.object({ mean: z.number().nullable(), ci95: Ci }),
      medianCollapseStep: z.number().nullable(),
      survival: z.array(z.tuple([z.number(), z.number()])),
      vsBaseline: z
        .object({
          logRankP: z.number(),
          verdict: z.string(),
          against: z.string().optional(),
          rolloutSpeedup: z.number().nullable().optional(),
        })
        .nullable(),
      /** The row's baseline had no runs at its env and level (10b86a0; absent in older summaries). */
      baselineMissing: z.string().optional(),
      heldOutSurvivors: Summary,
      rolloutSecondsPerStep: Summary.optional(),
    }),
  ),
  /** Per level, the runs finished of those planned (summaries written from a ledger; older ones: every row complete). */
  progress: z.array(z.object({ level: z.number().int(), done: z.number().int(), planned: z.number().int() })).optional(),
  /** Runs copied from other studies' ledgers (ladder.ts ladderSummary; absent: none, or a summary written before reuse). */
  reused: z
    .object({
      runs: z.number().int(),
      rule: z.string(),
      from: z.array(z.object({ study: z.string(), runs: z.number().int(), cells: z.array(z.string()) })),
    })
    .optional(),
});
type LadderSummaryFile = z.infer<typeof LadderSummaryFile>;

const noSummary = { n: 0, mean: null, ci95: null };
const uniqueSorted = (xs: readonly number[]) => [...new Set(xs)].sort((a, b) => a - b);
const unique = <T>(xs: readonly T[]) => [...new Set(xs)];

/**
 * The ledger committed beside a summary: its lines (null: none there), or why it cannot be read — the summary is shown
 * without its runs then, and says so.
 */
export interface CommittedLedger {
  /** Its path relative to the checkout, to show. */
  readonly file: string;
  readonly ledger: Ledger | null;
  readonly problem: string | null;
}

/** A ledger line as the run of a cell: known by its line only until withStored finds it in the data dir. */
function runOfLine(r: Ledger['records'][number], ledgerFile: string): LadderRunRef {
  const reusedFrom = r.reusedFrom ? { ...r.reusedFrom } : null;
  return {
    env: r.env,
    level: r.level,
    preset: r.preset,
    arm: r.arm ?? null,
    seed: r.seed,
    runId: r.runId,
    status: r.status,
    done: true,
    step: r.steps,
    collapseStep: r.collapseStep,
    heldOut: r.heldOutGreedy,
    stopReason: r.status === 'stopped' ? r.collapseReason : null,
    stored: false,
    reusedFrom,
    where: notStoredWhere({ runId: r.runId, reusedFrom }, ledgerFile),
  };
}

/** A planned seed the ledger has no line of yet. */
function unstarted(cell: Pick<LadderCell, 'env' | 'level' | 'preset' | 'arm'>, seed: number): LadderRunRef {
  return {
    ...cell,
    seed,
    runId: null,
    status: null,
    done: false,
    step: null,
    collapseStep: null,
    heldOut: null,
    stopReason: null,
    stored: false,
    reusedFrom: null,
    where: null,
  };
}

/**
 * A committed summary as the view's LadderInfo (`file`: its path relative to the checkout, to show), with the runs of
 * the ledger beside it when there is one.
 */
export function committedLadderInfo(summary: LadderSummaryFile, file: string, committedLedger: CommittedLedger | null = null): LadderInfo {
  const ledger = committedLedger?.ledger ?? null;
  const ledgerFile = ledger ? committedLedger!.file : null;
  const lines = ledger ? ledger.records.map((r) => runOfLine(r, ledgerFile!)) : [];
  const cmd = ladderCommandPlan(summary.command);
  const fraction = cmd.fraction ?? LADDER_CLI_DEFAULTS.fraction;
  const stepsFlag = flagValue(summary.command.trim().split(/\s+/), '--steps');
  const episodesFlag = flagValue(summary.command.trim().split(/\s+/), '--episodes');
  const steps = stepsFlag !== null && /^\d+$/.test(stepsFlag) ? Number(stepsFlag) : null;
  const episodes = episodesFlag !== null && /^\d+$/.test(episodesFlag) ? Number(episodesFlag) : LADDER_CLI_DEFAULTS.episodes;
  const arms = summary.arms ?? null;
  const baselineOf = (r: LadderSummaryFile['rows'][number]): string | null =>
    r.arm !== undefined ? (arms?.find((a) => a.name === r.arm)?.vs ?? null) : r.preset === summary.baseline ? null : summary.baseline;
  // A level the summary says is unfinished (its progress) leaves its cells incomplete; without progress, all are done.
  const progressOf = (level: number) => summary.progress?.find((p) => p.level === level) ?? null;
  const levelDone = (level: number) => {
    const p = progressOf(level);
    return p === null || p.done >= p.planned;
  };
  const cells: LadderCell[] = summary.rows.map((r) => {
    const n = r.seedList.length;
    const cell = { env: r.env, level: r.level, preset: r.preset, arm: r.arm ?? null };
    // With the ledger: the planned seeds (its header's plan), each its line or not trained yet.
    const seeds = ledger ? uniqueSorted([...ledger.header.plan.seeds, ...r.seedList]) : [...r.seedList];
    const mine = lines.filter((x) => x.env === r.env && x.level === r.level && (x.arm ?? x.preset) === (r.arm ?? r.preset));
    const runs = ledger ? seeds.map((seed) => mine.find((x) => x.seed === seed) ?? unstarted(cell, seed)) : [];
    return {
      ...cell,
      seeds,
      done: n,
      // With the ledger each cell knows its own seeds; without it, only whether its level finished.
      complete: ledger ? runs.every((x) => x.done) : levelDone(r.level),
      // The share is collapsed / n over the listed seeds: the count is exact back from it.
      collapsedShare: {
        collapsed: r.collapsedShare.mean === null ? 0 : Math.round(r.collapsedShare.mean * n),
        n,
        mean: r.collapsedShare.mean,
        ci95: r.collapsedShare.ci95,
      },
      medianCollapseStep: r.medianCollapseStep,
      survival: r.survival.map(([t, v]) => [t, v] as [number, number]),
      vsBaseline: r.vsBaseline
        ? {
            logRankP: r.vsBaseline.logRankP,
            chiSquare: null,
            verdict: r.vsBaseline.verdict,
            against: r.vsBaseline.against ?? baselineOf(r) ?? summary.baseline,
            rolloutSpeedup: r.vsBaseline.rolloutSpeedup ?? null,
          }
        : null,
      ...(r.baselineMissing !== undefined ? { baselineMissing: r.baselineMissing } : {}),
      heldOutSurvivors: { n: r.heldOutSurvivors.n, mean: r.heldOutSurvivors.mean, ci95: r.heldOutSurvivors.ci95 },
      rolloutSecondsPerStep: r.rolloutSecondsPerStep
        ? { n: r.rolloutSecondsPerStep.n, mean: r.rolloutSecondsPerStep.mean, ci95: r.rolloutSecondsPerStep.ci95 }
        : noSummary,
      runs,
      reused: reusedOf(runs),
    };
  });
  const levels = uniqueSorted([...summary.levels.map((l) => l.level), ...summary.rows.map((r) => r.level)]).map((level) => {
    const known = summary.levels.find((l) => l.level === level);
    const runs = summary.rows.filter((r) => r.level === level).reduce((a, r) => a + r.seedList.length, 0);
    const p = progressOf(level);
    return {
      level,
      study: `${summary.name}-p${level}`,
      overrides: { ...(known?.overrides ?? {}) },
      why: known?.why ?? 'not listed in the summary',
      started: p === null || p.done > 0,
      done: p?.done ?? runs,
      planned: p?.planned ?? runs,
    };
  });
  const total = levels.reduce((a, l) => a + l.done, 0);
  const planned = levels.reduce((a, l) => a + l.planned, 0);
  const stop = summary.onCollapse?.startsWith('stop') ?? false;
  return {
    name: summary.name,
    source: 'committed',
    summaryFile: file,
    command: summary.command,
    createdAt: null,
    baseline: summary.baseline,
    fraction,
    collapse: summary.collapse,
    stopOnCollapse: stop,
    onCollapse: summary.onCollapse ?? 'continue: every run trained to its last step; a collapsed run counts at its collapse step',
    envs: unique(summary.rows.map((r) => r.env)),
    presets: unique(summary.rows.map((r) => r.preset)),
    arms: arms ? arms.map((a) => ({ name: a.name, preset: a.preset, sets: { ...a.sets }, vs: a.vs })) : null,
    seeds: uniqueSorted(summary.rows.flatMap((r) => r.seedList)),
    steps,
    episodes,
    levels,
    done: total,
    planned,
    complete: total >= planned,
    cells,
    reused: summary.reused
      ? { runs: summary.reused.runs, rule: summary.reused.rule, from: summary.reused.from.map((f) => ({ ...f, cells: [...f.cells] })) }
      : reusedOfRefs(lines, null),
    ledgerFile,
    ledgerProblem: committedLedger?.problem ?? ledger?.torn ?? null,
    notStored: lines.length,
  };
}

/**
 * The committed ladder with the runs this data dir holds marked stored (`has`: the run store has that id), so the
 * view links them; the others keep their line and where it is from.
 */
export async function withStored(info: LadderInfo, has: (runId: string) => Promise<boolean>): Promise<LadderInfo> {
  const mark = async (r: LadderRunRef): Promise<LadderRunRef> =>
    r.runId !== null && (await has(r.runId)) ? { ...r, stored: true, where: null } : r;
  const cells = await Promise.all(info.cells.map(async (c) => ({ ...c, runs: await Promise.all(c.runs.map(mark)) })));
  return { ...info, cells, notStored: cells.reduce((n, c) => n + c.runs.filter((r) => r.done && !r.stored).length, 0) };
}

/** The list entry of a ladder (committed or not). */
export function ladderListItem(info: LadderInfo): LadderListItem {
  return {
    name: info.name,
    source: info.source,
    command: info.command,
    createdAt: info.createdAt,
    levels: info.levels.map((l) => l.level),
    envs: [...info.envs],
    cells: info.arms ? info.arms.map((a) => a.name) : [...info.presets],
    seeds: info.seeds.length,
    done: info.done,
    planned: info.planned,
    complete: info.complete,
    problem: null,
  };
}

/** The ledger in `dir` (a committed ladder's folder), or what keeps it from being read. */
async function committedLedger(dir: string, file: string): Promise<CommittedLedger> {
  try {
    return { file, ledger: await readLedger(dir), problem: null };
  } catch (e) {
    return { file, ledger: null, problem: `${(e as Error).message}; its runs are not listed (the statistics are the summary's)` };
  }
}

/** A committed summary.json that is a ladder's but cannot be read: its name, file and what is wrong. */
export interface CommittedProblem {
  readonly name: string;
  readonly file: string;
  readonly problem: string;
}

/**
 * Every ladder summary under `dir` (`dir/NAME/summary.json`), by name; `relDir` is how the files are shown (e.g.
 * `resources/studies`). A missing `dir` has none; a summary of another kind is left out. A summary.json that is not
 * JSON, or a ladder's without the fields the view needs, is a problem naming the file and the field — one bad file
 * does not hide the others.
 */
export async function readCommittedLadders(dir: string, relDir: string): Promise<{ ladders: LadderInfo[]; problems: CommittedProblem[] }> {
  const ladders: LadderInfo[] = [];
  const problems: CommittedProblem[] = [];
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { ladders, problems };
    throw e;
  }
  for (const name of names.sort()) {
    const file = `${relDir}/${name}/summary.json`;
    let text: string;
    try {
      text = await readFile(join(dir, name, 'summary.json'), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw e;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      problems.push({ name, file, problem: `${file}: not JSON (${(e as Error).message})` });
      continue;
    }
    // An arena study's summary (or anything else) is not a ladder.
    if (typeof json !== 'object' || json === null || (json as { kind?: unknown }).kind !== 'ladder') continue;
    const parsed = LadderSummaryFile.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({
        name,
        file,
        problem: `${file}: not a ladder summary this lab can read (${issue.path.join('.') || '(top)'}: ${issue.message})`,
      });
      continue;
    }
    ladders.push(committedLadderInfo(parsed.data, file, await committedLedger(join(dir, name), `${relDir}/${name}/${LEDGER_FILE}`)));
  }
  return { ladders, problems };
}
