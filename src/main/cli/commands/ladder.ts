import { readFile, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError, parseCommandArgs, type CliCommand } from '../types';
import { intArg, modelArg, parseSets, resolveOrUsage, progressLine } from '../args';
import { STUDY_OPTIONS, commandLine, listArg } from '../studyArgs';
import { PRESET_NAMES, PRESSURE_LEVELS, type RunConfig } from '../../../core/config/index';
import { ENV_CATALOG } from '../../../core/envs/index';
import { ladderRows } from '../../../core/stats/index';
import { projectRoot } from '../../platform/appInfo';
import { writeFileAtomic } from '../../store/atomic';
import { armSpecsOfFile, parseArms, type Arm } from '../../app/studies/arms';
import {
  armBaselines,
  formatLadder,
  ladderReadme,
  ladderSummary,
  levelStudyName,
  runLadder,
  storedLadderLevels,
  storedLadderPlan,
  type LadderPlan,
} from '../../app/studies/ladder';
import { checkStudyName, studyExists, type StudyPlan } from '../../app/studies/studyFiles';
import { resolveTarget } from '../../remote/computeTarget';

/** The recalibrated separating range (src/core/config/pressure.ts): level 0 never collapses, level 4 breaks all. */
const DEFAULT_LEVELS = '1,2,3';

const usage = `Usage: arlarena ladder [--levels 1,2,3] [--envs a,b] [--presets p,q,…] [--seeds N] [--steps N] [--model SIZE]
                       [--set key=value …] [--baseline PRESET] [--episodes N] [--fraction X] [--on-collapse stop|continue]
                       [--arms SPEC… | --arms-file FILE] [--study NAME [--resume]] [--out DIR] [--parallel N]
                       [--on NAME|URL] [--json]

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
                only survivors' held-out success is reported); continue: train every run to its last step.
                Stored with the ladder: --resume keeps what it was started with
  --arms SPEC…  named arms instead of --presets, one quoted argument each: NAME=PRESET[;KEY=VALUE…][ vs ARM]
                (KEY=VALUE as --set, after the ladder's own --set); each arm is compared with its "vs" arm, by
                default the first arm listed with its preset, e.g.
                --arms "grpo-fp32=grpo" "grpo-int8=grpo;compute.rolloutPrecision=int8"
                       "grpo-int8-tis=grpo;compute.rolloutPrecision=int8;algorithm.rolloutCorrection.is=token vs grpo-int8"
  --arms-file F the same specs, one per line (# comments)
  --study NAME  keep the studies in the data dir and write resources/studies/NAME/{summary.json,README.md}
  --resume      continue ladder NAME: repeat its command with --resume; each level's stored plan is used
                (its arms, baseline and --on-collapse setting; different arms or settings are refused)
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

function resolveArm(arm: Arm | undefined, preset: string, env: string, overrides: Record<string, string | number | boolean>): RunConfig {
  try {
    return resolveOrUsage({ preset, env, overrides });
  } catch (e) {
    if (arm && e instanceof UsageError) throw new UsageError(`arm ${arm.name}: ${e.message}`);
    throw e;
  }
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
    // Resumed without --levels: the levels the ladder has stored (a default that changed since it started must not
    // start other levels); otherwise --levels or the default.
    const storedLevels = values.resume && values.levels === undefined ? await storedLadderLevels(ctx.dataDir, name) : [];
    if (values.resume && values.levels === undefined && storedLevels.length === 0)
      throw new UsageError(`no ladder "${name}" in ${ctx.dataDir} (no study ${name}-p<level>); start it without --resume`);
    const levels =
      storedLevels.length > 0
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
    let arms: Arm[] | null = null;
    if (armSpecs) {
      try {
        arms = parseArms(armSpecs);
      } catch (e) {
        throw new UsageError(`--arms: ${(e as Error).message}`);
      }
      for (const a of arms)
        if ('training.pressure' in a.sets)
          throw new UsageError(`--arms: arm ${a.name} sets training.pressure; the ladder sets the level itself (--levels)`);
    }

    let fraction = Number(values.fraction ?? '0.5');
    if (!(fraction > 0 && fraction < 1)) throw new UsageError(`--fraction ${JSON.stringify(values.fraction)}: expected a number in (0, 1)`);
    const onCollapse = values['on-collapse'];
    if (onCollapse !== undefined && onCollapse !== 'stop' && onCollapse !== 'continue')
      throw new UsageError(`--on-collapse ${JSON.stringify(onCollapse)}: expected stop or continue`);
    let stopOnCollapse = onCollapse !== 'continue';
    // A resumed ladder keeps what its levels were started with (their stored plans): a run must not be stopped under
    // one collapse definition and summarised under another, nor an arm trained with other overrides than its seeds.
    const stored = values.resume ? await storedLadderPlan(ctx.dataDir, name, levels) : null;
    if (stored) {
      const at = stored.stopOnCollapse ?? null;
      if (onCollapse !== undefined && stopOnCollapse !== (at !== null))
        throw new UsageError(
          `--on-collapse ${onCollapse}: ladder "${name}" was started with --on-collapse ${at !== null ? 'stop' : 'continue'}; drop the flag to resume it`,
        );
      if (at !== null && values.fraction !== undefined && fraction !== at.fraction)
        throw new UsageError(
          `--fraction ${values.fraction}: ladder "${name}" stops runs at collapse with --fraction ${at.fraction}; drop the flag or give that value`,
        );
      stopOnCollapse = at !== null;
      if (at !== null) fraction = at.fraction;
      const storedArms = stored.arms ?? null;
      if (arms !== null && JSON.stringify(arms) !== JSON.stringify(storedArms))
        throw new UsageError(
          storedArms
            ? `--arms: ladder "${name}" was started with other arms (${storedArms.map((a) => a.name).join(', ')}); drop --arms to resume it with its own`
            : `--arms: ladder "${name}" was started with presets, not arms; drop --arms to resume it`,
        );
      arms = storedArms;
    }

    const presets = arms
      ? [...new Set(arms.map((a) => a.preset))]
      : listArg('presets', values.presets ?? stored?.presets.join(',') ?? 'grpo,cispo,sapo,sampo', PRESET_NAMES);
    // Resumed without --baseline: the one the ladder was started with.
    const baseline = arms ? arms[0].name : (values.baseline ?? stored?.baseline ?? 'grpo');
    if (!arms && !presets.includes(baseline))
      throw new UsageError(`--baseline ${baseline}: not among --presets (${presets.join(',')}); add it to --presets or choose one of them`);
    const sets = parseSets(values.set ?? []);
    if ('training.pressure' in sets) throw new UsageError('--set training.pressure: the ladder sets the level itself; use --levels');
    if (name !== '' && !values.resume && levels.some((l) => studyExists(ctx.dataDir, levelStudyName(name, l)))) {
      throw new UsageError(
        `ladder "${name}" already exists in ${ctx.dataDir}; continue it with --study ${name} --resume, or choose another name`,
      );
    }
    const seeds = intArg('seeds', values.seeds ?? '8', 1)!;
    const plan: LadderPlan = {
      // The command that started the ladder (a resume repeats it with --resume; the summary records the first).
      command: stored?.command ?? commandLine('ladder', args),
      levels,
      envs: listArg(
        'envs',
        values.envs ?? 'sokoban',
        ENV_CATALOG.map((e) => e.name),
      ),
      presets,
      seeds: Array.from({ length: seeds }, (_, i) => i + 1),
      steps: intArg('steps', values.steps, 1) ?? null,
      model: modelArg(values.model) ?? null,
      sets,
      baseline,
      episodes: intArg('episodes', values.episodes ?? '100', 1)!,
      fraction,
      stopOnCollapse,
      arms,
    };
    // Every arm at every level and env resolves (and so validates) before anything trains; its error names the arm.
    if (arms)
      for (const level of levels)
        for (const env of plan.envs)
          for (const a of arms) resolveArm(a, a.preset, env, overridesOf({ ...plan, sets: { ...sets, 'training.pressure': level } }, a, 1));
    const target = await resolveTarget(ctx.dataDir, values.on);
    await target.preflight();
    const { complete, outcomes } = await runLadder({
      dataDir: ctx.dataDir,
      name,
      plan,
      resume: values.resume === true,
      parallel: intArg('parallel', values.parallel, 1) ?? 1,
      target,
      ...(ctx.jobs ? { jobs: ctx.jobs } : {}),
      // Every combination is resolved (and so validated) before its level trains; an arm's overrides come from the
      // level's stored plan.
      configOf: (p, e) => {
        const arm = e.arm !== undefined ? p.arms?.find((a) => a.name === e.arm) : undefined;
        if (e.arm !== undefined && !arm) throw new UsageError(`the stored plan has no arm "${e.arm}"; the study file was edited by hand`);
        return resolveArm(arm, e.preset, e.env, overridesOf(p, arm, e.seed));
      },
      log: (line) => {
        if (!json) ctx.stderr.write(`${line}\n`);
      },
      onProgress: (id, p) => {
        if (ctx.isTTY && !json) ctx.stderr.write(`\r${progressLine(id, p)}\x1b[K`);
      },
    });
    const rows = ladderRows(outcomes, { baseline, vs: armBaselines(plan) });
    const summary = ladderSummary(name, plan, rows);
    let summaryDir: string | null = null;
    if (name !== '') {
      summaryDir = join(values.out !== undefined ? resolve(values.out) : join(projectRoot(), 'resources', 'studies'), name);
      await mkdir(summaryDir, { recursive: true });
      await writeFileAtomic(join(summaryDir, 'summary.json'), `${JSON.stringify(summary, null, 1)}\n`);
      await writeFileAtomic(join(summaryDir, 'README.md'), ladderReadme(name, plan, rows));
    }
    if (json) ctx.stdout.write(`${JSON.stringify({ ...summary, summaryDir })}\n`);
    else {
      ctx.stdout.write(formatLadder(rows));
      if (summaryDir) ctx.stdout.write(`summary: ${join(summaryDir, 'summary.json')}\n`);
      if (!complete)
        ctx.stdout.write(
          `some runs did not complete; ${name !== '' ? `arlarena ladder --study ${name} --resume continues them` : 'see arlarena runs'}\n`,
        );
    }
    return complete ? 0 : 1;
  },
};

export default ladder;
