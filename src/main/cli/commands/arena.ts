import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError, parseCommandArgs, type CliCommand } from '../types';
import ladder from './ladder';
import { intArg, modelArg, parseSets, resolveOrUsage, progressLine } from '../args';
import { STUDY_OPTIONS, commandLine, listArg } from '../studyArgs';
import { lockedStudyCommand } from '../studyLock';
import { PRESET_NAMES, type RunConfig } from '../../../core/config/index';
import { ENV_CATALOG } from '../../../core/envs/index';
import { arenaCells, type ArenaRunOutcome } from '../../../core/stats/index';
import { projectRoot } from '../../platform/appInfo';
import { removeDeadTempsIn, writeFileAtomic } from '../../store/atomic';
import { runStudy } from '../../app/studies/runStudy';
import {
  checkStudyName,
  readStudy,
  studyExists,
  studyFile,
  writeStudy,
  type StudyPlan,
  type StudyState,
} from '../../app/studies/studyFiles';
import { formatTable, studyReadme, studySummary } from '../../app/studies/summary';
import { resolveTarget } from '../../remote/computeTarget';
import { RayClient } from '../../remote/rayClient';
import { rayJobCpus } from '../../remote/rayTarget';
import { RemoteTargets } from '../../remote/targets';

const usage = `Usage: arlarena arena [--envs a,b] [--presets p,q,…] [--seeds N] [--steps N] [--model SIZE] [--set key=value …]
                      [--baseline PRESET] [--episodes N] [--threshold X] [--study NAME [--resume]] [--out DIR]
                      [--parallel N] [--on NAME|URL] [--json]

The paper's comparison on our testbed: every preset × env × seed trained into the run store (one after the
other), each final policy evaluated on fixed held-out tasks greedy and sampled, then a table like the paper's
with 95 % intervals over seeds and a paired comparison of every preset with the baseline: the difference with
its interval, a paired t test p-value (two-sided; the exact sign-flip p beside it in --json), a verdict
("better", "worse" or "not separable at N seeds") and the seeds the observed effect would need for 80 % power.
Seed k of every preset trains on the same task seeds, so runs pair by seed.
  --envs        comma-separated environments (default sokoban)
  --presets     comma-separated presets (default grpo,cispo,sapo,gspo,gigpo,dapo_grpo,sampo)
  --seeds N     seeds 1..N per (preset, env) (default 3)
  --steps N     RL steps per run (default: each preset's training.steps)
  --baseline P  the preset every other is compared with (default grpo; must be among --presets)
  --episodes N  held-out tasks per evaluation (default 100)
  --threshold X training-success threshold for "steps to threshold" (default 0.5)
  --study NAME  keep the plan and its runs in the data dir (studies/NAME) and write the summary to
                resources/studies/NAME/summary.json with a README beside it
  --resume      continue study NAME: finished runs are kept, unfinished ones continue from their latest
                checkpoint, missing ones start; the stored plan is used (plan flags are refused)
  --out DIR     where the study's summary folder goes (default resources/studies of the checkout)
  --parallel N  train N runs at a time, each in its own worker (default 1; 2 on an idle 2-core machine);
                results do not depend on it (a run is a function of its config and seed)
  --on NAME|URL train every run on a Ray cluster (arlarena remote add), as many at a time as its free CPUs hold
                unless --parallel says otherwise; evaluation runs here on the checkpoints that come back
  --json        one JSON object per finished run, then one with the table (the summary object)
  --ladder      the pressure ladder instead: presets × pressure levels × seeds with collapse survival
                statistics (the same as arlarena ladder; see arlarena ladder --help for its flags), also
                of named arms (--arms / --arms-file: a preset + overrides each, e.g. int8 rollouts ± correction)`;

const PLAN_FLAGS = ['envs', 'presets', 'seeds', 'steps', 'model', 'set', 'baseline', 'episodes', 'threshold'] as const;

function numberArg(name: string, raw: string, lo: number, hi: number): number {
  const x = Number(raw);
  if (!Number.isFinite(x) || x < lo || x > hi)
    throw new UsageError(`--${name} ${JSON.stringify(raw)}: expected a number in [${lo}, ${hi}]`);
  return x;
}

function configOf(plan: StudyPlan, e: { env: string; preset: string; seed: number }): RunConfig {
  const overrides: Record<string, string | number | boolean> = { ...plan.sets, seed: e.seed };
  if (plan.steps !== null) overrides['training.steps'] = plan.steps;
  if (plan.model !== null) overrides['model.size'] = plan.model;
  return resolveOrUsage({ preset: e.preset, env: e.env, overrides });
}

const arena: CliCommand = {
  summary: "run the paper's method comparison (presets × envs × seeds) with intervals and paired verdicts",
  usage,
  async run(args, ctx) {
    if (args.includes('--ladder'))
      return ladder.run(
        args.filter((a) => a !== '--ladder'),
        ctx,
      );
    // Arms are compared by survival (collapse) statistics, which the ladder computes: say where they go.
    const armsFlag = args.find((a) => a === '--arms' || a.startsWith('--arms=') || a === '--arms-file' || a.startsWith('--arms-file='));
    if (armsFlag)
      throw new UsageError(
        `${armsFlag.split('=')[0]}: a study of arms runs as a ladder (survival statistics, each arm against its baseline arm): ` +
          'arlarena ladder --levels L --arms-file FILE … (or arena --ladder …); see arlarena ladder --help',
      );
    const { values } = parseCommandArgs({
      args,
      options: {
        ...STUDY_OPTIONS,
        threshold: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    });
    const json = values.json === true;
    // A cluster that is unreachable or refuses the token is reported before anything is planned or trained.
    const target = await resolveTarget(ctx.dataDir, values.on);
    await target.preflight();
    // On Ray: as many runs at once as the free CPUs hold, each job reserving its K (rayTarget.resolveRayCompute).
    const rayK = () => {
      const sets = parseSets(values.set ?? []);
      return rayJobCpus((sets['compute.backend'] ?? 'auto') as RunConfig['compute']['backend'], Number(sets['compute.workers'] ?? 0));
    };
    const parallel =
      intArg('parallel', values.parallel, 1) ??
      (target.url
        ? Math.max(
            1,
            Math.floor((await new RayClient(await new RemoteTargets(ctx.dataDir).resolve(values.on!)).summary()).cpus.free / rayK()),
          )
        : 1);
    const name = values.study;
    if (name !== undefined) {
      const bad = checkStudyName(name);
      if (bad) throw new UsageError(`--study: ${bad}`);
    }
    if (values.resume && name === undefined) throw new UsageError('--resume continues a study: add --study NAME');
    if (values.out !== undefined && name === undefined) throw new UsageError('--out is where a study writes its summary: add --study NAME');

    let state: StudyState;
    if (values.resume) {
      const given = PLAN_FLAGS.filter((f) => values[f] !== undefined);
      if (given.length > 0)
        throw new UsageError(
          `--resume uses the plan stored with study "${name}"; drop ${given.map((f) => `--${f}`).join(', ')} (or start a new study)`,
        );
      if (!studyExists(ctx.dataDir, name!))
        throw new UsageError(`no study "${name}" in ${ctx.dataDir}; start it with arlarena arena --study ${name} …`);
      state = await readStudy(ctx.dataDir, name!);
    } else {
      if (name !== undefined && studyExists(ctx.dataDir, name)) {
        const done = (await readStudy(ctx.dataDir, name)).entries.filter((e) => e.outcome).length;
        throw new UsageError(
          `study "${name}" already exists in ${ctx.dataDir} (${done} run(s) done); continue it with --study ${name} --resume, or choose another name`,
        );
      }
      const envs = listArg(
        'envs',
        values.envs ?? 'sokoban',
        ENV_CATALOG.map((e) => e.name),
      );
      const presets = listArg('presets', values.presets ?? 'grpo,cispo,sapo,gspo,gigpo,dapo_grpo,sampo', PRESET_NAMES);
      const baseline = values.baseline ?? 'grpo';
      if (!presets.includes(baseline))
        throw new UsageError(
          `--baseline ${baseline}: not among --presets (${presets.join(',')}); add it to --presets or choose one of them`,
        );
      const seeds = intArg('seeds', values.seeds ?? '3', 1)!;
      const plan: StudyPlan = {
        command: commandLine('arena', args),
        envs,
        presets,
        seeds: Array.from({ length: seeds }, (_, i) => i + 1),
        steps: intArg('steps', values.steps, 1) ?? null,
        model: modelArg(values.model) ?? null,
        sets: parseSets(values.set ?? []),
        baseline,
        episodes: intArg('episodes', values.episodes ?? '100', 1)!,
        threshold: numberArg('threshold', values.threshold ?? '0.5', 0, 1),
      };
      state = {
        version: 1,
        name: name ?? '',
        createdAt: new Date().toISOString(),
        plan,
        entries: envs.flatMap((env) =>
          presets.flatMap((preset) =>
            plan.seeds.map((seed) => ({ env, preset, seed, runId: null, status: null, wallSeconds: null, outcome: null })),
          ),
        ),
      };
    }
    // Validate every combination before training anything.
    const configs = new Map(state.entries.map((e) => [JSON.stringify([e.env, e.preset, e.seed]), configOf(state.plan, e)]));
    if (name !== undefined && !values.resume) await writeStudy(ctx.dataDir, state);
    if (name !== undefined && !json) ctx.stderr.write(`study ${name}: ${studyFile(ctx.dataDir, name)}\n`);

    const complete = await runStudy({
      dataDir: ctx.dataDir,
      state,
      persist: name !== undefined,
      parallel,
      ...(ctx.jobs ? { jobs: ctx.jobs } : {}),
      target,
      configOf: (e) => configs.get(JSON.stringify([e.env, e.preset, e.seed]))!,
      log: (line) => {
        if (!json) ctx.stderr.write(`${line}\n`);
      },
      onProgress: (id, p) => {
        if (ctx.isTTY && !json) ctx.stderr.write(`\r${progressLine(id, p)}\x1b[K`);
      },
      onEntry: (e) => {
        if (ctx.isTTY && !json) ctx.stderr.write('\n');
        if (json) ctx.stdout.write(`${JSON.stringify({ type: 'run', ...e })}\n`);
      },
    });

    const outcomes = state.entries.map((e) => e.outcome).filter((o): o is ArenaRunOutcome => o !== null);
    const cells = arenaCells(outcomes, { baseline: state.plan.baseline, threshold: state.plan.threshold });
    const summary = studySummary(state, cells);
    let summaryDir: string | null = null;
    if (name !== undefined) {
      summaryDir = join(values.out !== undefined ? resolve(values.out) : join(projectRoot(), 'resources', 'studies'), name);
      await mkdir(summaryDir, { recursive: true });
      await removeDeadTempsIn(summaryDir);
      await writeFileAtomic(join(summaryDir, 'summary.json'), `${JSON.stringify(summary, null, 1)}\n`);
      await writeFileAtomic(join(summaryDir, 'README.md'), studyReadme(state, cells));
    }
    if (json) {
      ctx.stdout.write(`${JSON.stringify({ type: 'table', ...summary, cells, summaryDir })}\n`);
    } else {
      ctx.stdout.write(formatTable(state, cells));
      const wall = state.entries.map((e) => e.wallSeconds).filter((w): w is number => w !== null);
      const runs = name !== undefined ? `tag study:${name}` : 'tag arena';
      ctx.stdout.write(
        `${outcomes.length}/${state.entries.length} runs in the table (${runs} in ${ctx.dataDir}); training wall ${(wall.reduce((a, b) => a + b, 0) / 60).toFixed(1)} min in total\n`,
      );
      if (summaryDir) ctx.stdout.write(`summary: ${join(summaryDir, 'summary.json')}\n`);
      if (!complete)
        ctx.stdout.write(
          `some runs did not complete; ${name !== undefined ? `arlarena arena --study ${name} --resume continues them` : 'see arlarena runs'}\n`,
        );
    }
    return complete ? 0 : 1;
  },
};

// One process at a time runs study NAME (--study, --resume): the second is refused; --ladder is the ladder's.
export default lockedStudyCommand(arena, (args) => (args.includes('--ladder') ? null : 'arena'));
