import { parseCommandArgs, UsageError, type CliCommand } from '../types';
import { intArg, modelArg, parseSets, progressLine, resolveOrUsage } from '../args';
import { trainInStore } from '../../app/trainRun';
import { resolveTarget } from '../../remote/computeTarget';

const usage = `Usage: arlarena train [--preset NAME] [--env NAME] [--steps N] [--seed N] [--model SIZE] [--set key=value …] [--name TEXT] [--json]

Train one run (behaviour-cloning warm start, then RL) in the run store the app uses, and print its run id.
  --preset NAME   method preset (default sampo; see arlarena algo presets)
  --env NAME      testbed environment (default sokoban; see arlarena envs)
  --steps N       RL steps (default: the preset's training.steps)
  --seed N        master seed (default 1)
  --model SIZE    nano | small | base | custom (custom needs --set model.dModel=… etc.)
  --set key=value any config field, e.g. --set optim.lr=1e-5 --set rollout.groupSize=8 (repeatable)
  --name TEXT     run name shown in the app
  --max-minutes M wall-clock budget: stop after the first update past M minutes (checkpoint kept; status
                  "stopped", exit code 0) — for comparing methods at equal time rather than equal steps
  --on NAME|URL   train on a Ray cluster (a remote from arlarena remote add, or its dashboard URL): the run is
                  submitted as a Ray job and its metrics stream back into this machine's run store
  --line-protocol (the entrypoint of a run on Ray, submitted by --on; not for direct use)
  --json          print one JSON object {runId, status, step, summary} instead of text`;

const train: CliCommand = {
  summary: 'train a run (warm start + RL) into the run store and print its id',
  usage,
  async run(args, ctx) {
    const { values } = parseCommandArgs({
      args,
      options: {
        preset: { type: 'string', default: 'sampo' },
        env: { type: 'string', default: 'sokoban' },
        steps: { type: 'string' },
        seed: { type: 'string' },
        model: { type: 'string' },
        set: { type: 'string', multiple: true },
        name: { type: 'string' },
        'max-minutes': { type: 'string' },
        on: { type: 'string' },
        'line-protocol': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    if (values['line-protocol']) return (await import('../../remote/remoteWorker')).runOverLines(ctx.stdout);
    const overrides = parseSets(values.set ?? []);
    const steps = intArg('steps', values.steps, 1);
    const seed = intArg('seed', values.seed, 0);
    const model = modelArg(values.model);
    const maxMinutes = values['max-minutes'] === undefined ? undefined : Number(values['max-minutes']);
    if (maxMinutes !== undefined && !(maxMinutes > 0))
      throw new UsageError(`--max-minutes must be a number > 0, got "${values['max-minutes']}"`);
    if (steps !== undefined) overrides['training.steps'] = steps;
    if (seed !== undefined) overrides.seed = seed;
    if (model !== undefined) overrides['model.size'] = model;
    const config = resolveOrUsage({ preset: values.preset!, env: values.env!, overrides });
    const json = values.json === true;
    const tty = ctx.isTTY && !json;
    // A cluster that is unreachable or refuses the token is reported before any run record exists.
    const target = await resolveTarget(ctx.dataDir, values.on);
    await target.preflight();
    const { record, budgetHit } = await trainInStore(ctx.dataDir, config, {
      ...(ctx.jobs ? { jobs: ctx.jobs } : {}),
      target,
      ...(values.name ? { name: values.name } : {}),
      ...(maxMinutes !== undefined ? { maxMinutes } : {}),
      onCreated: (id) => {
        if (!json)
          ctx.stderr.write(
            `run ${id}: ${config.preset} on ${config.env.name}, ${config.training.steps} steps, seed ${config.seed}${target.kind === 'ray' ? `, on ${target.label}` : ''}\n`,
          );
      },
      onProgress: (id, p) => {
        if (tty) ctx.stdout.write(`\r${progressLine(id, p)}\x1b[K`);
      },
    });
    if (tty) ctx.stdout.write('\n');
    if (json) {
      ctx.stdout.write(
        `${JSON.stringify({ runId: record.id, status: record.status, budgetHit, step: record.step, totalSteps: record.totalSteps, wallSeconds: record.wallSeconds, summary: record.summary, error: record.error })}\n`,
      );
    } else {
      if (budgetHit) ctx.stderr.write(`run ${record.id} stopped at the ${maxMinutes}-minute budget after step ${record.step}\n`);
      else if (record.status !== 'completed')
        ctx.stderr.write(`run ${record.id} ended ${record.status}${record.error ? `: ${record.error}` : ''}\n`);
      ctx.stdout.write(`${record.id}\n`);
    }
    return record.status === 'completed' || budgetHit ? 0 : 1;
  },
};

export default train;
