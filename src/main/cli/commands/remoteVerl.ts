/**
 * `arlarena remote verl`: a lab preset (plus --set overrides) as a launch of one verl stack — ARLArena's own code
 * by default, or verl-agent — at the paper's scale for a Hugging Face model (--laptop keeps the preset's values;
 * src/main/remote/verl/). --check composes the launch against the Hydra config of a checkout on this machine; with
 * --on NAME|URL the same check runs first on the cluster (a short Ray job in --workdir, with the cluster's Python) or
 * here against --check-dir, then the launch is submitted as a Ray job and its console log followed live into a lab
 * run (verlFollow.ts). docs/guides/verl.md has the key table.
 */
import { parseCommandArgs, UsageError, type CliContext } from '../types';
import { parseSets } from '../args';
import { RunStore } from '../../store/runStore';
import { RayClient } from '../../remote/rayClient';
import { RemoteTargets } from '../../remote/targets';
import { followRayJobIntoRun } from '../../remote/verlFollow';
import { buildVerlLaunch, verlLabConfig, VerlMappingError, type VerlLaunch } from '../../remote/verl/launch';
import { PAPER_SCALE } from '../../remote/verl/paperScale';
import { DEFAULT_VERL_STACK, VERL_STACK_NAMES, verlStack } from '../../remote/verl/stacks/index';
import { checkHydraOverrides, checkHydraOverridesOnRay, describeHydraReport, type HydraCheckReport } from '../../remote/verl/hydraCheck';
import { VERL_ENVS, type VerlEnv } from '../../remote/verl/types';

function q(v: string): string {
  return /^[A-Za-z0-9_./:=,+$~-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

export async function runVerl(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parseCommandArgs({
    args,
    options: {
      preset: { type: 'string', default: 'sampo' },
      env: { type: 'string' },
      model: { type: 'string' },
      stack: { type: 'string', default: DEFAULT_VERL_STACK },
      laptop: { type: 'boolean', default: false },
      gpus: { type: 'string', default: '8' },
      set: { type: 'string', multiple: true },
      experiment: { type: 'string' },
      print: { type: 'boolean', default: false },
      check: { type: 'boolean', default: false },
      python: { type: 'string', default: 'python3' },
      'config-dir': { type: 'string' },
      'config-name': { type: 'string' },
      'check-dir': { type: 'string' },
      'no-check': { type: 'boolean', default: false },
      on: { type: 'string' },
      workdir: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const envs = Object.keys(VERL_ENVS);
  if (!values.env || !envs.includes(values.env)) throw new UsageError(`--env ${values.env ?? '(missing)'}: one of ${envs.join(', ')}`);
  if (!values.model)
    throw new UsageError(
      '--model HF_ID is needed (the Hugging Face model verl loads and keeps as π_ref; the paper: UCLA-SCAI/Qwen3-4B-rft-alfworld or -webshop)',
    );
  if (!VERL_STACK_NAMES.includes(values.stack as never))
    throw new UsageError(
      `--stack ${values.stack}: one of ${VERL_STACK_NAMES.join(', ')} (default ${DEFAULT_VERL_STACK}, the paper's own code)`,
    );
  const gpus = Number(values.gpus);
  if (!Number.isInteger(gpus) || gpus < 1) throw new UsageError(`--gpus ${values.gpus}: expected an integer ≥ 1 (GPUs per node)`);
  if (values.check && !values.on && !values.workdir && !values['check-dir'])
    throw new UsageError(
      '--check needs --workdir PATH (or --check-dir PATH): the root of a checkout of the stack on this machine, whose Hydra config the launch is composed against',
    );
  const env = values.env as VerlEnv;
  const stack = verlStack(values.stack!);
  const { config, issues } = verlLabConfig(values.preset!, env, parseSets(values.set ?? []), values.laptop!);
  if (!config) throw new UsageError(issues.map((i) => `${i.field}: ${i.message}`).join('; '));
  let launch: VerlLaunch;
  try {
    launch = buildVerlLaunch(config, PAPER_SCALE[env].infra, {
      stack,
      env,
      model: values.model,
      gpus,
      ...(values.experiment ? { experiment: values.experiment } : {}),
    });
  } catch (e) {
    if (e instanceof VerlMappingError) throw new UsageError(e.message);
    throw e;
  }
  const command = values.workdir ? `cd ${q(values.workdir)} && ${launch.command}` : launch.command;

  // The check, before anything is submitted: here against --check-dir (or, with --check alone, --workdir), else —
  // with --on — on the cluster itself, as a short Ray job in the checkout the launch will run from.
  const stamp = new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14);
  const checkInput = {
    python: values.python!,
    configDir: values['config-dir'] ?? launch.entry.configDir,
    configName: values['config-name'] ?? launch.entry.configName,
    overrides: launch.overrides,
  };
  const localDir = values['check-dir'] ?? (values.on ? undefined : values.workdir);
  if (values.on && !values.workdir)
    throw new UsageError(
      "--on needs --workdir DIR: the root of the stack's checkout on the cluster, where the launch runs (and is checked first)",
    );
  let client: RayClient | null = null;
  let clusterUrl = '';
  /** The cluster, reached once: before a check that runs there, else only after a local check has passed. */
  const cluster = async (): Promise<RayClient> => {
    if (!client) {
      const access = await new RemoteTargets(ctx.dataDir).resolve(values.on!);
      client = new RayClient(access);
      clusterUrl = access.url;
      await client.version();
    }
    return client;
  };
  let report: HydraCheckReport | null = null;
  let where = '';
  const fail = (e: unknown): never => {
    throw new UsageError(
      `--check: ${e instanceof Error ? e.message : String(e)}${values.on ? '; nothing was submitted (--no-check skips the check)' : ''}`,
    );
  };
  if (values.check || (values.on && !values['no-check'])) {
    if (localDir) {
      report = await checkHydraOverrides({ ...checkInput, workdir: localDir }).catch(fail);
      where = `${checkInput.configDir}/${checkInput.configName}.yaml in ${localDir}`;
    } else {
      report = await checkHydraOverridesOnRay(await cluster(), `verl-check-${config.preset}-${env}-${stamp}`, {
        ...checkInput,
        workdir: values.workdir!,
      }).catch(fail);
      where = `${checkInput.configDir}/${checkInput.configName}.yaml in ${values.workdir} on ${clusterUrl}`;
    }
  }
  const problems = report ? describeHydraReport(report) : [];

  if (values.json) {
    ctx.stdout.write(
      `${JSON.stringify({ stack: stack.name, entry: launch.entry, command, overrides: launch.overrides, caveats: launch.caveats, noEquivalent: launch.noEquivalent, ...(report ? { check: report } : {}) })}\n`,
    );
  } else {
    // Shown before it is submitted too: the user sees exactly what runs on the cluster.
    const c = config;
    ctx.stdout.write(
      `# ${c.preset} on ${env} for ${stack.label}, ${stack.repo}: run from the root of its checkout (config ${launch.entry.configDir}/${launch.entry.configName}.yaml)\n`,
    );
    ctx.stdout.write(
      values.laptop
        ? `# scale: the preset's laptop values (--laptop): batch ${c.rollout.tasksPerStep} × group ${c.rollout.groupSize}, response ${c.rollout.maxResponseTokens} tokens, lr ${c.optim.lr}, mini-batch ${c.optim.miniBatchRows} rows, ${c.training.steps} steps\n`
        : `# scale: the paper's for ${env} (${PAPER_SCALE[env].sources[0]}): batch ${c.rollout.tasksPerStep} × group ${c.rollout.groupSize}, response ${c.rollout.maxResponseTokens} tokens, lr ${c.optim.lr}, mini-batch ${c.optim.miniBatchRows} rows, ${c.training.steps} steps; --laptop keeps the preset's\n`,
    );
    for (const n of launch.caveats) ctx.stdout.write(`# note: ${n}\n`);
    ctx.stdout.write(`${command}\n`);
    if (report) {
      if (problems.length === 0) ctx.stdout.write(`# check: all ${launch.overrides.length} overrides compose against ${where}\n`);
      else for (const p of problems) ctx.stdout.write(`# check: ${p}\n`);
    }
  }
  if (problems.length > 0) {
    ctx.stderr.write(
      `remote verl --check: ${problems.length} problem${problems.length === 1 ? '' : 's'} against the checkout's Hydra config${values.on ? '; nothing was submitted' : ''}\n`,
    );
    return 1;
  }
  if (!values.on) return 0;
  const ray = await cluster();
  const submissionId = `verl-${config.preset}-${env}-${stamp}`;
  await ray.submitJob({
    submissionId,
    entrypoint: command,
    runtimeEnv: {},
    metadata: { arlarena_verl: `${stack.name}/${config.preset}/${env}` },
  });
  ctx.stderr.write(`submitted Ray job ${submissionId} to ${clusterUrl}; following its log into a lab run (Ctrl-C stops the job)\n`);
  const store = await RunStore.open(ctx.dataDir);
  let stop = false;
  const onInt = () => (stop = true);
  process.on('SIGINT', onInt);
  try {
    const r = await followRayJobIntoRun(ray, store, submissionId, {
      name: `${config.preset} · ${env} · ${values.model} (${stack.name} on Ray)`,
      tags: ['verl', `stack:${stack.name}`, `preset:${config.preset}`],
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
