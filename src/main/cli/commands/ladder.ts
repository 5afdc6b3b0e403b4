import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { UsageError, parseCommandArgs, type CliCommand } from '../types';
import { intArg, modelArg, parseSets, resolveOrUsage, progressLine } from '../args';
import { PRESET_NAMES, PRESSURE_LEVELS } from '../../../core/config/index';
import { ENV_CATALOG } from '../../../core/envs/index';
import { ladderRows } from '../../../core/stats/index';
import { projectRoot } from '../../platform/appInfo';
import { writeFileAtomic } from '../../store/atomic';
import { formatLadder, ladderReadme, ladderSummary, levelStudyName, runLadder, type LadderPlan } from '../../app/studies/ladder';
import { checkStudyName, studyExists } from '../../app/studies/studyFiles';
import { resolveTarget } from '../../remote/computeTarget';

const usage = `Usage: arlarena ladder [--levels 0,2,4] [--envs a,b] [--presets p,q,…] [--seeds N] [--steps N] [--model SIZE]
                       [--set key=value …] [--baseline PRESET] [--episodes N] [--fraction X]
                       [--study NAME [--resume]] [--out DIR] [--parallel N] [--on NAME|URL] [--json]

The pressure ladder: presets × pressure levels × seeds (training.pressure = level sets the same knobs for every
preset: sequential mini-batch rows, epochs, lr, policy lag — see docs/config-reference.md). Each level is an
arena study (<NAME>-p<level>, resumable); then, per (env, level, preset): the share of seeds that collapsed with
its exact 95 % interval, the Kaplan–Meier median collapse step, survival curves, a log-rank test against the
baseline at the same level and the held-out success of the seeds that survived.
A run collapsed at its first critical alert or at the first validation whose held-out success fell below
--fraction × its step-0 validation (keep training.validateEvery > 0).
  --levels      comma-separated pressure levels (default 0,2,4; known ${PRESSURE_LEVELS.map((l) => l.level).join(',')})
  --presets     default grpo,cispo,sapo,sampo        --baseline  default grpo (must be among --presets)
  --seeds N     seeds 1..N per cell (default 8)      --steps N   RL steps per run (default each preset's)
  --episodes N  held-out tasks per final evaluation (default 100)
  --fraction X  held-out fall that counts as collapse (default 0.5)
  --study NAME  keep the studies in the data dir and write resources/studies/NAME/{summary.json,README.md}
  --resume      continue ladder NAME: repeat its command with --resume; each level's stored plan is used
  --json        the summary as one JSON object`;

function listArg(name: string, raw: string, valid: readonly string[]): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new UsageError(`--${name}: empty list; valid: ${valid.join(', ')}`);
  for (const it of items) if (!valid.includes(it)) throw new UsageError(`--${name}: unknown "${it}"; valid: ${valid.join(', ')}`);
  if (new Set(items).size !== items.length) throw new UsageError(`--${name}: "${raw}" lists a name twice`);
  return items;
}

const ladder: CliCommand = {
  summary: 'run the pressure ladder (presets × pressure levels × seeds) with collapse survival statistics',
  usage,
  async run(args, ctx) {
    const { values } = parseCommandArgs({
      args,
      options: {
        levels: { type: 'string' },
        envs: { type: 'string' },
        presets: { type: 'string' },
        seeds: { type: 'string' },
        steps: { type: 'string' },
        model: { type: 'string' },
        set: { type: 'string', multiple: true },
        baseline: { type: 'string' },
        episodes: { type: 'string' },
        fraction: { type: 'string' },
        study: { type: 'string' },
        resume: { type: 'boolean', default: false },
        out: { type: 'string' },
        parallel: { type: 'string' },
        on: { type: 'string' },
        json: { type: 'boolean', default: false },
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
    const levels = listArg(
      'levels',
      values.levels ?? '0,2,4',
      PRESSURE_LEVELS.map((l) => String(l.level)),
    )
      .map(Number)
      .sort((a, b) => a - b);
    const presets = listArg('presets', values.presets ?? 'grpo,cispo,sapo,sampo', PRESET_NAMES);
    const baseline = values.baseline ?? 'grpo';
    if (!presets.includes(baseline))
      throw new UsageError(`--baseline ${baseline}: not among --presets (${presets.join(',')}); add it to --presets or choose one of them`);
    const fraction = Number(values.fraction ?? '0.5');
    if (!(fraction > 0 && fraction < 1)) throw new UsageError(`--fraction ${JSON.stringify(values.fraction)}: expected a number in (0, 1)`);
    const sets = parseSets(values.set ?? []);
    if ('training.pressure' in sets) throw new UsageError('--set training.pressure: the ladder sets the level itself; use --levels');
    if (name !== '' && !values.resume && levels.some((l) => studyExists(ctx.dataDir, levelStudyName(name, l)))) {
      throw new UsageError(
        `ladder "${name}" already exists in ${ctx.dataDir}; continue it with --study ${name} --resume, or choose another name`,
      );
    }
    const seeds = intArg('seeds', values.seeds ?? '8', 1)!;
    const plan: LadderPlan = {
      command: ['arlarena', 'ladder', ...args].join(' '),
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
    };
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
      // Every combination is resolved (and so validated) before its level trains.
      configOf: (p, e) => {
        const overrides: Record<string, string | number | boolean> = { ...p.sets, seed: e.seed };
        if (p.steps !== null) overrides['training.steps'] = p.steps;
        if (p.model !== null) overrides['model.size'] = p.model;
        return resolveOrUsage({ preset: e.preset, env: e.env, overrides });
      },
      log: (line) => {
        if (!json) ctx.stderr.write(`${line}\n`);
      },
      onProgress: (id, p) => {
        if (ctx.isTTY && !json) ctx.stderr.write(`\r${progressLine(id, p)}\x1b[K`);
      },
    });
    const rows = ladderRows(outcomes, { baseline });
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
