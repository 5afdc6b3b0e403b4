/**
 * `arlarena remote verl`: a lab preset (plus --set overrides) as a launch of verl / verl-agent's main_ppo
 * (verl.ts), printed with what needs ARLArena's fork and what has no verl equivalent; with --on NAME|URL it is
 * submitted to the cluster as a Ray job and its console log followed live into a lab run (verlFollow.ts).
 */
import { parseCommandArgs, UsageError, type CliContext } from '../types';
import { parseSets, resolveOrUsage } from '../args';
import { RunStore } from '../../store/runStore';
import { RayClient } from '../../remote/rayClient';
import { RemoteTargets } from '../../remote/targets';
import { buildVerlLaunch, VERL_ENVS, type VerlEnv } from '../../remote/verl';
import { followRayJobIntoRun } from '../../remote/verlFollow';

export async function runVerl(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parseCommandArgs({
    args,
    options: {
      preset: { type: 'string', default: 'sampo' },
      env: { type: 'string' },
      model: { type: 'string' },
      gpus: { type: 'string', default: '8' },
      set: { type: 'string', multiple: true },
      print: { type: 'boolean', default: false },
      on: { type: 'string' },
      workdir: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const envs = Object.keys(VERL_ENVS);
  if (!values.env || !envs.includes(values.env)) throw new UsageError(`--env ${values.env ?? '(missing)'}: one of ${envs.join(', ')}`);
  if (!values.model) throw new UsageError('--model HF_ID is needed (the Hugging Face model verl loads, e.g. Qwen/Qwen2.5-1.5B-Instruct)');
  const gpus = Number(values.gpus);
  if (!Number.isInteger(gpus) || gpus < 1) throw new UsageError(`--gpus ${values.gpus}: expected an integer ≥ 1 (GPUs per node)`);
  const env = values.env as VerlEnv;
  const config = resolveOrUsage({ preset: values.preset!, env: VERL_ENVS[env], overrides: parseSets(values.set ?? []) });
  const launch = buildVerlLaunch(config, { env, model: values.model, gpus });
  const command = values.workdir ? `cd ${values.workdir} && ${launch.command}` : launch.command;
  if (values.json) ctx.stdout.write(`${JSON.stringify({ command, overrides: launch.overrides, forkOnly: launch.forkOnly, noEquivalent: launch.noEquivalent })}\n`);
  else {
    // Shown before it is submitted too: the user sees exactly what runs on the cluster.
    ctx.stdout.write(`# ${config.preset} on ${env} as a verl-agent launch (run it from a verl-agent checkout${launch.forkOnly.length ? ' — or ARLArena\'s fork, for the lines below' : ''}):\n`);
    for (const f of launch.forkOnly) ctx.stdout.write(`#   needs ARLArena's fork: ${f}\n`);
    ctx.stdout.write(`# batch ${config.rollout.tasksPerStep} × group ${config.rollout.groupSize}, lr ${config.optim.lr}, response ${config.rollout.maxResponseTokens} tokens, ${config.training.steps} steps are the preset's laptop values: set the paper's with --set (e.g. rollout.tasksPerStep=16 rollout.groupSize=8 optim.lr=1e-6 rollout.maxResponseTokens=512 training.steps=200)\n`);
    ctx.stdout.write(`${command}\n`);
  }
  if (!values.on) return 0;
  const access = await new RemoteTargets(ctx.dataDir).resolve(values.on);
  const client = new RayClient(access);
  await client.version();
  const submissionId = `verl-${config.preset}-${env}-${new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}`;
  await client.submitJob({ submissionId, entrypoint: command, runtimeEnv: {}, metadata: { arlarena_verl: `${config.preset}/${env}` } });
  ctx.stderr.write(`submitted Ray job ${submissionId} to ${access.url}; following its log into a lab run (Ctrl-C stops the job)\n`);
  const store = await RunStore.open(ctx.dataDir);
  let stop = false;
  const onInt = () => (stop = true);
  process.on('SIGINT', onInt);
  try {
    const r = await followRayJobIntoRun(client, store, submissionId, {
      name: `${config.preset} · ${env} · ${values.model} (verl on Ray)`,
      tags: ['verl', `preset:${config.preset}`],
      shouldStop: () => stop,
      onStarted: (runId) => ctx.stderr.write(`run ${runId}\n`),
      onAlert: (_id, a, kind) => {
        if (kind === 'raised') ctx.stderr.write(`alert ${a.severity} ${a.rule} at step ${a.firstStep}: ${a.message}\n`);
      },
    });
    ctx.stderr.write(`Ray job ${submissionId} ${r.job.status}: run ${r.follow.runId} ${r.follow.status} at step ${r.follow.step}\n`);
    return r.job.status === 'SUCCEEDED' ? 0 : 1;
  } finally {
    process.off('SIGINT', onInt);
    await store.close();
  }
}
