import { readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { UsageError, parseCommandArgs, type CliCommand, type CliContext } from '../types';
import { intArg, modelArg, parseSets, resolveOrUsage, progressLine } from '../args';
import { STUDY_OPTIONS, commandLine, listArg } from '../studyArgs';
import { lockedStudyCommand } from '../studyLock';
import { PRESET_NAMES, PRESSURE_LEVELS, type RunConfig } from '../../../core/config/index';
import { ENV_CATALOG } from '../../../core/envs/index';
import { ladderRows } from '../../../core/stats/index';
import { appVersion, projectRoot } from '../../platform/appInfo';
import { armSpec, armSpecsOfFile, parseArms, type Arm } from '../../app/studies/arms';
import {
  LedgerKeeper,
  armBaselines,
  formatLadder,
  ladderSummary,
  levelPlan,
  levelStudyName,
  runLadder,
  storedLadderLevels,
  storedLadderPlan,
  storedLadderReportDir,
  type LadderPlan,
} from '../../app/studies/ladder';
import { LADDER_CLI_DEFAULTS, ladderCommandPlan } from '../../app/studies/ladderInfo';
import {
  configHash,
  ledgerPlanMismatches,
  ledgerPlanOf,
  majorOf,
  readLedger,
  type Ledger,
  type LedgerBackend,
} from '../../app/studies/ledger';
import { plannedBackend, readDonorLedgers, type BackendHere } from '../../app/studies/reuse';
import { checkStudyName, readStudy, studyExists, type StudyPlan } from '../../app/studies/studyFiles';
import { detectComputeBackend } from '../../compute/detect';
import { machineWorkers } from '../../compute/gradPool';
import { resolveTarget, type ComputeTarget } from '../../remote/computeTarget';
import { submittedBackend } from '../../remote/rayTarget';

/** The recalibrated separating range (ladderInfo.ts LADDER_CLI_DEFAULTS, which the Ladder view reads too). */
const DEFAULT_LEVELS = LADDER_CLI_DEFAULTS.levels.join(',');

const usage = `Usage: arlarena ladder [--levels 1,2,3] [--envs a,b] [--presets p,q,…] [--seeds N] [--steps N] [--model SIZE]
                       [--set key=value …] [--baseline PRESET] [--episodes N] [--fraction X] [--on-collapse stop|continue]
                       [--arms SPEC… | --arms-file FILE] [--study NAME [--resume]] [--out DIR] [--no-reuse]
                       [--parallel N] [--on NAME|URL] [--json]
       arlarena ladder --study NAME --export-ledger [--out DIR] [--json]

The pressure ladder: presets × pressure levels × seeds (training.pressure = level sets the same knobs for every
preset: sequential mini-batch rows, epochs, lr, policy lag — see docs/config-reference.md). Each level is an
arena study (<NAME>-p<level>, resumable); then, per (env, level, preset): the share of seeds that collapsed with
its exact 95 % interval, the Kaplan–Meier median collapse step, survival curves, a log-rank test against the
baseline at the same level, the held-out success of the seeds that survived and the rollout seconds per step.
A run collapsed at its first critical alert or at the first validation whose held-out success fell below
--fraction × its step-0 validation (keep training.validateEvery > 0).
  --levels      comma-separated pressure levels (default ${DEFAULT_LEVELS}; known ${PRESSURE_LEVELS.map((l) => l.level).join(',')});
                on --resume without it: the levels the ladder has stored
  --presets     default grpo,cispo,sapo,sampo        --baseline  default grpo (must be among --presets)
  --seeds N     seeds 1..N per cell (default 8)      --steps N   RL steps per run (default each preset's)
  --episodes N  held-out tasks per final evaluation (default 100)
  --fraction X  held-out fall that counts as collapse (default 0.5)
  --on-collapse stop (default): a run stops at its collapse step, recorded as stopped "collapsed at step S (…)",
                and is not evaluated held-out (the statistics are the same: it counts as a collapse at S, and
                only survivors' held-out success is reported); continue: train every run to its last step
  --arms SPEC…  named arms instead of --presets, one quoted argument each: NAME=PRESET[;KEY=VALUE…][ vs ARM]
                (KEY=VALUE as --set, after the ladder's own --set); each arm is compared with its "vs" arm, by
                default the first arm listed with its preset, e.g.
                --arms "grpo-fp32=grpo" "grpo-int8=grpo;compute.rolloutPrecision=int8"
                       "grpo-int8-tis=grpo;compute.rolloutPrecision=int8;algorithm.rolloutCorrection.is=token vs grpo-int8"
  --arms-file F the same specs, one per line (# comments)
  --study NAME  keep the studies in the data dir and write resources/studies/NAME/{ledger.jsonl,summary.json,README.md}:
                the ledger gets each run as it finishes (commit it with the summary), summary and README are
                rewritten from it after every level
  --resume      continue ladder NAME as it was started: arlarena ladder --study NAME --resume (with --out DIR where
                its ledger is there) takes the plan stored with it — its level studies in the data dir, else its
                ledger's header (a fresh clone) — presets or arms, baseline, seeds, steps, model, --set, episodes,
                --fraction and --on-collapse; a plan flag given too must equal the stored value (one that differs is
                refused, naming both values), so repeating the whole command works as well. With another --out the
                ledger moves there (from where the ladder last wrote it), and the ladder records where it is. Where
                the data dir has no such ladder, the committed ledger's runs count as done and only the rest train;
                a ledger of another major version or another config of a run is refused with the fix
  --no-reuse    train every run: by default a named ladder takes a run that has no run yet from another study's
                ledger (resources/studies/*/ledger.jsonl, and --out DIR's) when that ledger holds it finished with
                the same config hash, seed and major version, held-out episodes and collapse rule, trained on the
                backend and K the run would get here ("reused … from study X"; its line is marked reusedFrom, and
                the summary says how many were reused from where)
  --export-ledger  write the ledger, summary and README of ladder NAME from the data dir's finished runs (trains
                nothing; for a ladder started before the ledger existed)
  --json        the summary as one JSON object`;

/**
 * `--arms A B C` takes every argument up to the next `--flag` (node's parseArgs takes one value per flag); `--arms=A`
 * one. Returns the other arguments and the specs (null without --arms).
 */
export function takeArms(args: readonly string[]): { rest: string[]; specs: string[] | null } {
  const rest: string[] = [];
  let specs: string[] | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith('--arms=')) {
      (specs ??= []).push(a.slice('--arms='.length));
    } else if (a === '--arms') {
      const start = i;
      while (i + 1 < args.length && !args[i + 1].startsWith('--')) (specs ??= []).push(args[++i]);
      if (i === start)
        throw new UsageError('--arms: give one or more arm specs, e.g. --arms "fp32=sampo" "int8=sampo;compute.rolloutPrecision=int8"');
    } else rest.push(a);
  }
  return { rest, specs };
}

/** A run's overrides: the ladder's --set (with the level), then the arm's, then seed, steps and model. */
function overridesOf(p: Pick<StudyPlan, 'sets' | 'steps' | 'model'>, arm: Arm | undefined, seed: number) {
  const overrides: Record<string, string | number | boolean> = { ...p.sets, ...(arm?.sets ?? {}), seed };
  if (p.steps !== null) overrides['training.steps'] = p.steps;
  if (p.model !== null) overrides['model.size'] = p.model;
  return overrides;
}

/**
 * The config a ladder run trains with: its preset at its env, with the level's stored plan's --set and level, its
 * arm's overrides, seed, steps and model (what the ledger's config hash is taken of).
 */
export function ladderRunConfig(p: StudyPlan, e: { env: string; preset: string; seed: number; arm?: string }): RunConfig {
  const arm = e.arm !== undefined ? p.arms?.find((a) => a.name === e.arm) : undefined;
  if (e.arm !== undefined && !arm) throw new UsageError(`the stored plan has no arm "${e.arm}"; the study file was edited by hand`);
  return resolveArm(arm, e.preset, e.env, overridesOf(p, arm, e.seed));
}

function resolveArm(arm: Arm | undefined, preset: string, env: string, overrides: Record<string, string | number | boolean>): RunConfig {
  try {
    return resolveOrUsage({ preset, env, overrides });
  } catch (e) {
    if (arm && e instanceof UsageError) throw new UsageError(`arm ${arm.name}: ${e.message}`);
    throw e;
  }
}

/** A path as shown in messages: relative to the checkout when inside it. */
function shown(file: string): string {
  const rel = relative(projectRoot(), file);
  return rel.startsWith('..') || rel === '' ? file : rel;
}

/** The ladder plan a data dir's level study was made under (its command for what the plan does not keep). */
function ladderPlanOfStored(p: StudyPlan, levels: readonly number[]): LadderPlan {
  const sets = Object.fromEntries(Object.entries(p.sets).filter(([k]) => k !== 'training.pressure'));
  return {
    command: p.command,
    levels: [...levels],
    envs: [...p.envs],
    presets: [...p.presets],
    seeds: [...p.seeds],
    steps: p.steps,
    model: p.model,
    sets,
    baseline: p.baseline,
    episodes: p.episodes,
    fraction: p.stopOnCollapse?.fraction ?? ladderCommandPlan(p.command).fraction ?? 0.5,
    stopOnCollapse: (p.stopOnCollapse ?? null) !== null,
    arms: p.arms ?? null,
  };
}

const fixByName = (name: string) =>
  `or start a new ladder under another --study name (this one's ledger keeps its runs; move it aside to start ${name} over)`;

/**
 * The plan a ledger's runs were trained under against the plan of the ladder the data dir holds (a resume takes its
 * plan from there, so the two differ only when --out names another ladder's ledger of the same name), or a UsageError
 * naming what differs and the fix.
 */
function checkLedgerPlan(name: string, ledger: Ledger, plan: LadderPlan, dataDir: string): void {
  const diff = ledgerPlanMismatches(ledger.header.plan, ledgerPlanOf(plan));
  if (diff.length > 0)
    throw new UsageError(
      `ladder "${name}": its ledger (${shown(ledger.file)}) holds runs trained under another plan than ladder "${name}" in ${dataDir} ` +
        `was started with: ${diff.join('; ')}. Fix: give --out the folder of this ladder's own ledger (another --out starts ` +
        `one there), move that ledger aside, ${fixByName(name)}`,
    );
}

/**
 * Refuse to continue a ladder from a ledger whose runs would not compare with the ones this checkout trains: another
 * plan, another major version of the lab, or another resolved config of a run (a preset, level or default changed).
 */
function checkLedger(
  name: string,
  ledger: Ledger,
  plan: LadderPlan,
  dataDir: string,
  configOf: (p: StudyPlan, e: { env: string; preset: string; seed: number; arm?: string }) => RunConfig,
): void {
  checkLedgerPlan(name, ledger, plan, dataDir);
  const here = appVersion();
  const mine = ledger.records.filter((r) => plan.levels.includes(r.level));
  const label = (r: (typeof mine)[number]) => `level ${r.level} · ${r.arm ?? r.preset} · ${r.env} · seed ${r.seed}`;
  const older = mine.filter((r) => majorOf(r.appVersion) !== majorOf(here));
  if (older.length > 0)
    throw new UsageError(
      `ladder "${name}": ${older.length} run(s) of its ledger (${shown(ledger.file)}) were trained by ARLArena Lab ${older[0].appVersion} ` +
        `(${label(older[0])}, commit ${older[0].appCommit}), this is ${here}, another major version whose runs need not compare. ` +
        `Fix: finish the ladder with a checkout of that version (git checkout ${older[0].appCommit.replace(/-dirty$/, '')}), ${fixByName(name)}`,
    );
  const changed = mine
    .map((r) => ({ r, now: configHash(configOf(levelPlan(plan, r.level), r)) }))
    .filter(({ r, now }) => now !== r.configHash);
  if (changed.length > 0) {
    const { r, now } = changed[0];
    throw new UsageError(
      `ladder "${name}": ${changed.length} run(s) of its ledger (${shown(ledger.file)}) were trained with another config than this checkout ` +
        `resolves for them (${label(r)}: ${r.configHash} in the ledger, ${now} here): a preset, a pressure level or a default changed since. ` +
        `Fix: finish the ladder with the checkout that trained them (git checkout ${r.appCommit.replace(/-dirty$/, '')}), ${fixByName(name)}`,
    );
  }
}

/**
 * What a run of a config would train on where this ladder trains it, as its run record will name it: on Ray what the
 * job is submitted with (rayTarget.ts submittedBackend: auto is wasm there); here `auto` is the backend the machine's
 * packages offer first and K = 0 its cores (the look train.ts takes before it trains; it does not load libtensorflow,
 * whose thread pools the first load in this process would fix for every run it trains).
 */
function backendOnTarget(target: ComputeTarget): (config: RunConfig) => LedgerBackend {
  if (target.kind === 'ray')
    return (config) => {
      const b = submittedBackend(config.compute, target.label);
      return { training: b.training, rollout: b.rollout, workers: b.workers! };
    };
  let here: BackendHere | null = null;
  return (config) => plannedBackend(config, (here ??= { training: detectComputeBackend().training, workers: machineWorkers() }));
}

/** Where a ladder reading `reportDir` finds other studies' ledgers: the committed studies and those beside it (--out). */
const donorRoots = (reportDir: string): string[] => [join(projectRoot(), 'resources', 'studies'), dirname(reportDir)];

/**
 * `--export-ledger`: the data dir's finished runs of ladder `name` into its ledger, summary and README, with the
 * lines of the runs it reused from other studies (those runs are not in the data dir: their lines come from the
 * donors' ledgers, LedgerKeeper.restoreReused). A reused run whose donor line is gone is named, and the export exits 1.
 */
async function exportLedger(ctx: CliContext, name: string, reportDir: string, ledger: Ledger | null, json: boolean): Promise<number> {
  const levels = await storedLadderLevels(ctx.dataDir, name);
  if (levels.length === 0) throw new UsageError(`no ladder "${name}" in ${ctx.dataDir} (no study ${name}-p<level>); nothing to export`);
  const stored = (await storedLadderPlan(ctx.dataDir, name, levels))!;
  const planned = ladderCommandPlan(stored.command).levels ?? DEFAULT_LEVELS.split(',').map(Number);
  const plan = ladderPlanOfStored(
    stored,
    [...new Set([...planned, ...levels])].sort((a, b) => a - b),
  );
  if (ledger) checkLedgerPlan(name, ledger, plan, ctx.dataDir);
  const keeper = new LedgerKeeper(ctx.dataDir, reportDir, name, plan, ledger);
  const donors = await readDonorLedgers(donorRoots(reportDir), reportDir, (line) => ctx.stderr.write(`${line}\n`));
  const added: Record<number, number> = {};
  const reused: Record<number, number> = {};
  const missing: string[] = [];
  for (const level of levels) {
    const state = await readStudy(ctx.dataDir, levelStudyName(name, level));
    added[level] = await keeper.addFinished(level, state);
    const back = keeper.restoreReused(level, state, donors);
    reused[level] = back.restored;
    missing.push(...back.missing.map((m) => m.why));
  }
  await keeper.save();
  await keeper.writeReport();
  const progress = keeper.progress();
  const file = join(reportDir, 'ledger.jsonl');
  const from = (level: number) =>
    [
      ...(added[level] ? [`${added[level]} added from ${ctx.dataDir}`] : []),
      ...(reused[level] ? [`${reused[level]} reused, copied from their donors' ledgers`] : []),
    ].join(', ');
  for (const m of missing) ctx.stderr.write(`${m}\n`);
  if (missing.length > 0)
    ctx.stderr.write(
      `${missing.length} reused runs' lines are not in the ledger: restore their donor study's ledger (git) and export again, ` +
        `or arlarena ladder --study ${name} --resume, which trains them again\n`,
    );
  if (json) ctx.stdout.write(`${JSON.stringify({ ledger: file, summaryDir: reportDir, progress, added, reused, missing })}\n`);
  else
    ctx.stdout.write(
      `${progress.map((p) => `level ${p.level}: ${p.done} of ${p.planned} runs in the ledger${from(p.level) ? ` (${from(p.level)})` : ''}`).join('\n')}\n` +
        `ledger: ${file}\nsummary: ${join(reportDir, 'summary.json')}\n`,
    );
  return missing.length > 0 ? 1 : 0;
}

/** The plan a ladder was started with, as --resume reads it back (a level study's, or the ledger header's). */
type StartedPlan = Omit<LadderPlan, 'levels'>;

/** The plan flags a command gave (undefined: left out). */
interface GivenPlan {
  readonly envs: readonly string[] | undefined;
  readonly presets: readonly string[] | undefined;
  readonly arms: readonly Arm[] | undefined;
  /** Which flag gave the arms (--arms or --arms-file), for the message. */
  readonly armsFlag: string;
  readonly baseline: string | undefined;
  readonly seeds: readonly number[] | undefined;
  readonly steps: number | undefined;
  readonly model: string | undefined;
  readonly sets: Readonly<Record<string, string | number | boolean>> | undefined;
  readonly episodes: number | undefined;
  readonly fraction: number | undefined;
  readonly stopOnCollapse: boolean | undefined;
}

const seedList = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** One plan flag of a resume that differs from the ladder's start: the flag, its value here and when started. */
export interface ResumeConflict {
  readonly flag: string;
  readonly given: string;
  readonly started: string;
}

const setsText = (s: Readonly<Record<string, string | number | boolean>>): string =>
  Object.keys(s).length === 0
    ? 'none'
    : Object.keys(s)
        .sort()
        .map((k) => `${k}=${s[k]}`)
        .join(' ');

/**
 * The flags of a resume that differ from the plan the ladder was started with (empty: it continues as started).
 * Levels are not among them: a resume may add levels.
 */
export function resumeConflicts(started: StartedPlan, given: GivenPlan): ResumeConflict[] {
  const out: ResumeConflict[] = [];
  const check = <T>(flag: string, value: T | undefined, was: T, text: (v: T) => string) => {
    if (value === undefined) return;
    const a = text(value);
    const b = text(was);
    if (a !== b) out.push({ flag, given: a, started: b });
  };
  const armsText = (arms: readonly Arm[] | null) => (arms ? arms.map(armSpec).join(' ') : `none (presets ${started.presets.join(',')})`);
  check('--envs', given.envs, started.envs, (v) => v.join(','));
  if (given.arms !== undefined) check(given.armsFlag, given.arms, started.arms, armsText);
  if (given.presets !== undefined)
    check('--presets', given.presets, started.arms ? null : started.presets, (v) =>
      v === null ? `none (arms ${started.arms!.map((a) => a.name).join(', ')})` : v.join(','),
    );
  check('--baseline', given.baseline, started.baseline, String);
  const seeds = (v: readonly number[]) => (v.every((s, i) => s === i + 1) ? String(v.length) : `(seeds ${v.join(',')})`);
  check('--seeds', given.seeds, started.seeds, seeds);
  check('--steps', given.steps, started.steps, (v) => (v === null ? "none (each preset's)" : String(v)));
  check('--model', given.model, started.model, (v) => v ?? "none (each preset's)");
  check('--set', given.sets, started.sets, setsText);
  check('--episodes', given.episodes, started.episodes, String);
  check('--fraction', given.fraction, started.fraction, String);
  check('--on-collapse', given.stopOnCollapse, started.stopOnCollapse, (v) => (v ? 'stop' : 'continue'));
  return out;
}

/** The refusal of a resume whose flags differ from the ladder's start: each flag with both values, and the fix. */
function resumeRefused(name: string, conflicts: readonly ResumeConflict[], out: string | undefined): UsageError {
  const flags = conflicts.map((c) => c.flag);
  return new UsageError(
    `ladder "${name}" was started with another plan than this --resume gives: ` +
      `${conflicts.map((c) => `${c.flag}: ${c.given} here, ${c.started} when it was started`).join('; ')}. ` +
      `Fix: drop ${flags.join(', ')} (arlarena ladder --study ${name}${out !== undefined ? ` --out ${out}` : ''} --resume continues it ` +
      `with the plan it was started with), ${fixByName(name)}`,
  );
}

const ladder: CliCommand = {
  summary: 'run the pressure ladder (presets or arms × pressure levels × seeds) with collapse survival statistics',
  usage,
  async run(args, ctx) {
    const { rest, specs: armArgs } = takeArms(args);
    const { values } = parseCommandArgs({
      args: rest,
      options: {
        ...STUDY_OPTIONS,
        levels: { type: 'string' },
        fraction: { type: 'string' },
        'on-collapse': { type: 'string' },
        'arms-file': { type: 'string' },
        'export-ledger': { type: 'boolean', default: false },
        'no-reuse': { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    });
    const json = values.json === true;
    const name = values.study ?? '';
    if (values.study !== undefined) {
      const bad = checkStudyName(`${values.study}-p0`);
      if (bad) throw new UsageError(`--study: ${bad.replace('-p0', '')} (the level suffix -p<level> must fit too)`);
    }
    if (values.resume && name === '') throw new UsageError('--resume continues a ladder: add --study NAME');
    if (values.out !== undefined && name === '') throw new UsageError('--out is where a ladder writes its summary: add --study NAME');
    // A named ladder's ledger, summary.json and README.md: resources/studies/NAME, or --out DIR/NAME.
    const reportDir =
      name === '' ? null : join(values.out !== undefined ? resolve(values.out) : join(projectRoot(), 'resources', 'studies'), name);
    let ledger = reportDir ? await readLedger(reportDir) : null;
    // A resume with another --out moves the ledger: the one where the ladder last wrote it is the new one's start
    // (its lines of runs this data dir lacks, taken from a ledger on a fresh clone, cannot be made from the data dir).
    if (!ledger && values.resume && reportDir && !values['export-ledger']) {
      const before = await storedLadderReportDir(ctx.dataDir, name);
      if (before !== null && before !== reportDir) {
        ledger = await readLedger(before);
        if (ledger && !json)
          ctx.stderr.write(`ladder "${name}": its ledger moves from ${shown(ledger.file)} to ${shown(join(reportDir, 'ledger.jsonl'))}\n`);
      }
    }
    if (ledger?.torn) ctx.stderr.write(`${ledger.torn}\n`);
    if (values['export-ledger']) {
      const extra = Object.entries(values)
        .filter(([k, v]) => !['study', 'out', 'json', 'export-ledger', 'resume'].includes(k) && v !== undefined)
        .map(([k]) => `--${k}`);
      if (armArgs) extra.push('--arms');
      if (values.resume) extra.push('--resume');
      if (extra.length > 0)
        throw new UsageError(`--export-ledger reads the ladder as the data dir stores it and trains nothing: drop ${extra.join(', ')}`);
      if (name === '') throw new UsageError('--export-ledger writes the ledger of a ladder: add --study NAME');
      return exportLedger(ctx, name, reportDir!, ledger, json);
    }
    // Resumed: the plan stored with the ladder — its level studies in the data dir, else its ledger's header — which
    // continues it as it was started (W&B's resume="must", a CleanRL --resume): a flag left out takes the stored value,
    // a flag given must equal it (resumeConflicts). Without --levels, the levels the ladder has stored or its ledger
    // planned (a default that changed since it started must not start other levels).
    const storedInData = values.resume ? await storedLadderLevels(ctx.dataDir, name) : [];
    const storedLevels = values.resume ? [...new Set([...storedInData, ...(ledger?.header.plan.levels ?? [])])].sort((a, b) => a - b) : [];
    if (values.resume && values.levels === undefined && storedLevels.length === 0)
      throw new UsageError(
        `no ladder "${name}" in ${ctx.dataDir} (no study ${name}-p<level>); start it without --resume (nor a ledger at ${reportDir} to continue from)`,
      );
    const storedStudy = values.resume ? await storedLadderPlan(ctx.dataDir, name, storedInData) : null;
    const stored: StartedPlan | null = storedStudy ? ladderPlanOfStored(storedStudy, storedInData) : (ledger?.header.plan ?? null);
    const levels =
      values.resume && values.levels === undefined
        ? storedLevels
        : listArg(
            'levels',
            values.levels ?? DEFAULT_LEVELS,
            PRESSURE_LEVELS.map((l) => String(l.level)),
          )
            .map(Number)
            .sort((a, b) => a - b);

    // Arms: from --arms or --arms-file, instead of --presets/--baseline.
    let armSpecs = armArgs;
    if (values['arms-file'] !== undefined) {
      if (armSpecs) throw new UsageError('--arms and --arms-file: give the arms one way');
      let text: string;
      try {
        text = await readFile(resolve(values['arms-file']), 'utf8');
      } catch (e) {
        throw new UsageError(`--arms-file ${values['arms-file']}: cannot read it (${(e as Error).message})`);
      }
      armSpecs = armSpecsOfFile(text);
      if (armSpecs.length === 0) throw new UsageError(`--arms-file ${values['arms-file']}: no arm specs in it (one per line, # comments)`);
    }
    if (armSpecs && values.presets !== undefined)
      throw new UsageError('--presets with --arms: the arms name their presets; drop --presets');
    if (armSpecs && values.baseline !== undefined)
      throw new UsageError('--baseline with --arms: each arm names its baseline arm (" vs ARM" at the end of its spec); drop --baseline');
    let givenArms: Arm[] | null = null;
    if (armSpecs) {
      try {
        givenArms = parseArms(armSpecs);
      } catch (e) {
        throw new UsageError(`--arms: ${(e as Error).message}`);
      }
      for (const a of givenArms)
        if ('training.pressure' in a.sets)
          throw new UsageError(`--arms: arm ${a.name} sets training.pressure; the ladder sets the level itself (--levels)`);
    }

    const fractionArg = values.fraction === undefined ? undefined : Number(values.fraction);
    if (fractionArg !== undefined && !(fractionArg > 0 && fractionArg < 1))
      throw new UsageError(`--fraction ${JSON.stringify(values.fraction)}: expected a number in (0, 1)`);
    const onCollapse = values['on-collapse'];
    if (onCollapse !== undefined && onCollapse !== 'stop' && onCollapse !== 'continue')
      throw new UsageError(`--on-collapse ${JSON.stringify(onCollapse)}: expected stop or continue`);
    const setsArg = values.set === undefined ? undefined : parseSets(values.set);
    if (setsArg && 'training.pressure' in setsArg)
      throw new UsageError('--set training.pressure: the ladder sets the level itself; use --levels');
    const given: GivenPlan = {
      envs:
        values.envs === undefined
          ? undefined
          : listArg(
              'envs',
              values.envs,
              ENV_CATALOG.map((e) => e.name),
            ),
      presets: values.presets === undefined ? undefined : listArg('presets', values.presets, PRESET_NAMES),
      arms: givenArms ?? undefined,
      armsFlag: values['arms-file'] !== undefined ? '--arms-file' : '--arms',
      baseline: values.baseline,
      seeds: values.seeds === undefined ? undefined : seedList(intArg('seeds', values.seeds, 1)!),
      steps: intArg('steps', values.steps, 1),
      model: modelArg(values.model),
      sets: setsArg,
      episodes: intArg('episodes', values.episodes, 1),
      fraction: fractionArg,
      stopOnCollapse: onCollapse === undefined ? undefined : onCollapse === 'stop',
    };
    // A resumed ladder keeps what it was started with: a run must not be stopped under one collapse definition and
    // summarised under another, nor a seed trained with other settings than the seeds before it.
    if (stored) {
      const conflicts = resumeConflicts(stored, given);
      if (conflicts.length > 0) throw resumeRefused(name, conflicts, values.out);
    }
    const arms = stored ? stored.arms : givenArms;
    const presets = arms
      ? [...new Set(arms.map((a) => a.preset))]
      : (given.presets ?? stored?.presets ?? ['grpo', 'cispo', 'sapo', 'sampo']);
    const baseline = arms ? arms[0].name : (given.baseline ?? stored?.baseline ?? 'grpo');
    if (!arms && !presets.includes(baseline))
      throw new UsageError(`--baseline ${baseline}: not among --presets (${presets.join(',')}); add it to --presets or choose one of them`);
    if (ledger && !values.resume)
      throw new UsageError(
        `ladder "${name}" has a ledger (${shown(ledger.file)}, ${ledger.records.length} finished runs); continue it with --study ${name} --resume, or choose another name`,
      );
    if (name !== '' && !values.resume && levels.some((l) => studyExists(ctx.dataDir, levelStudyName(name, l)))) {
      throw new UsageError(
        `ladder "${name}" already exists in ${ctx.dataDir}; continue it with --study ${name} --resume, or choose another name`,
      );
    }
    const sets = stored ? { ...stored.sets } : (setsArg ?? {});
    const plan: LadderPlan = {
      // The command that started the ladder (a resume keeps it: the summary records the first).
      command: stored?.command ?? commandLine('ladder', args),
      levels,
      envs: stored ? [...stored.envs] : (given.envs ?? ['sokoban']),
      presets,
      seeds: stored ? [...stored.seeds] : (given.seeds ?? seedList(8)),
      steps: stored ? stored.steps : (given.steps ?? null),
      model: stored ? stored.model : (given.model ?? null),
      sets,
      baseline,
      episodes: stored ? stored.episodes : (given.episodes ?? LADDER_CLI_DEFAULTS.episodes),
      fraction: stored ? stored.fraction : (given.fraction ?? LADDER_CLI_DEFAULTS.fraction),
      stopOnCollapse: stored ? stored.stopOnCollapse : (given.stopOnCollapse ?? true),
      arms,
    };
    // Every arm at every level and env resolves (and so validates) before anything trains; its error names the arm.
    if (arms)
      for (const level of levels)
        for (const env of plan.envs)
          for (const a of arms) resolveArm(a, a.preset, env, overridesOf({ ...plan, sets: { ...sets, 'training.pressure': level } }, a, 1));
    // Every combination is resolved (and so validated) before its level trains; an arm's overrides come from the
    // level's stored plan.
    const configOf = ladderRunConfig;
    if (ledger) checkLedger(name, ledger, plan, ctx.dataDir, configOf);
    const log = (line: string) => {
      if (!json) ctx.stderr.write(`${line}\n`);
    };
    const target = await resolveTarget(ctx.dataDir, values.on);
    await target.preflight();
    // Runs another study already trained: the committed studies' ledgers and those beside this one's (--out). Read
    // with --no-reuse too: runs the ladder reused before keep their lines from there (LadderOptions.donors).
    const donors = reportDir ? await readDonorLedgers(donorRoots(reportDir), reportDir, log) : [];
    const reuse = reportDir && values['no-reuse'] !== true ? { from: donors, backendOf: backendOnTarget(target) } : undefined;
    const { complete, outcomes } = await runLadder({
      dataDir: ctx.dataDir,
      name,
      plan,
      resume: values.resume === true,
      parallel: intArg('parallel', values.parallel, 1) ?? 1,
      target,
      ...(ctx.jobs ? { jobs: ctx.jobs } : {}),
      configOf,
      ...(reportDir ? { reportDir, ledger, donors, ...(reuse ? { reuse } : {}) } : {}),
      log,
      onProgress: (id, p) => {
        if (ctx.isTTY && !json) ctx.stderr.write(`\r${progressLine(id, p)}\x1b[K`);
      },
    });
    const rows = ladderRows(outcomes, { baseline, vs: armBaselines(plan) });
    // A named ladder's summary.json was written by runLadder after its last level, from the ledger.
    const summaryDir = reportDir;
    const summary: unknown = summaryDir
      ? JSON.parse(await readFile(join(summaryDir, 'summary.json'), 'utf8'))
      : ladderSummary(name, plan, rows);
    if (json) ctx.stdout.write(`${JSON.stringify({ ...(summary as object), summaryDir })}\n`);
    else {
      ctx.stdout.write(formatLadder(rows));
      if (summaryDir) ctx.stdout.write(`summary: ${join(summaryDir, 'summary.json')}\n`);
      if (!complete)
        ctx.stdout.write(
          `some runs did not complete; ${name !== '' ? `arlarena ladder --study ${name}${values.out !== undefined ? ` --out ${values.out}` : ''} --resume continues them` : 'see arlarena runs'}\n`,
        );
    }
    return complete ? 0 : 1;
  },
};

// One process at a time runs ladder NAME (--study, --resume, --export-ledger): the second is refused.
export default lockedStudyCommand(ladder, () => 'ladder');
