import { parseCommandArgs, UsageError, type CliCommand } from '../types';
import { RemoteError, RemoteTargets } from '../../remote/targets';
import { RayClient } from '../../remote/rayClient';

const usage = `Usage: arlarena remote add NAME URL [--token-file F]
       arlarena remote list [--json]
       arlarena remote test NAME|URL [--json]
       arlarena remote remove NAME
       arlarena remote verl [--preset NAME] --env alfworld|webshop|sokoban --model HF_ID [--stack arlarena|verl-agent]
                            [--laptop] [--gpus N] [--set k=v …] [--experiment NAME] [--print]
                            [--check --workdir DIR [--python PY] [--config-dir DIR --config-name NAME]]
                            [--on NAME|URL --workdir DIR [--check-dir DIR | --no-check]] [--json]

Compute targets: Ray clusters the lab can run on (arlarena train --on NAME|URL).
  add     name a cluster by its dashboard address (e.g. http://head:8265); --token-file F holds its token when the
          cluster has token auth on (RAY_AUTH_MODE=token). The token is copied into the data directory, readable
          by you only (0600), and never printed.
  list    the named clusters (address, whether a token is stored)
  test    reach the cluster: Ray version, nodes, free CPUs and GPUs
  remove  forget a cluster and its token
  verl    the preset as a launch of the paper's own code (--stack arlarena, the default: ARLArena's
          recipe.{world,shop,game}_agent entry points) or of verl-agent's main_ppo, every knob at the key that stack
          has, at the paper's scale for a Hugging Face model (--laptop keeps the preset's values) on --gpus GPUs a
          node (default 8), as trainer.experiment_name --experiment (default PRESET_ENV_MODEL); --print shows it;
          --check composes it against the Hydra config of the checkout at --workdir (hydra-core, run by --python;
          nothing of verl imported; --config-dir/--config-name: another config than the stack's for the env, e.g.
          PyPI verl's verl/trainer/config ppo_trainer) and reports unknown keys, type errors and unset required
          fields; --on runs that check, then submits it as a Ray job (run from --workdir on the cluster) and
          follows its console log live into a lab run with alerts. docs/guides/verl.md has the key table per stack.`;

const remote: CliCommand = {
  summary: 'Ray clusters to run on: add, list, test, remove; the verl launch of a preset',
  usage,
  async run(args, ctx) {
    const [sub, ...rest] = args;
    const targets = new RemoteTargets(ctx.dataDir);
    try {
      switch (sub) {
        case 'add': {
          const { values, positionals } = parseCommandArgs({
            args: rest,
            options: { 'token-file': { type: 'string' } },
            strict: true,
            allowPositionals: true,
          });
          if (positionals.length !== 2)
            throw new UsageError('remote add takes NAME and URL, e.g. arlarena remote add lab http://head:8265 --token-file ~/.ray/token');
          const e = await targets.add(positionals[0]!, positionals[1]!, values['token-file']);
          ctx.stdout.write(`added ${e.name}: ${e.url}${e.hasToken ? ' (token stored)' : ''}\n`);
          return 0;
        }
        case 'list': {
          const { values } = parseCommandArgs({
            args: rest,
            options: { json: { type: 'boolean', default: false } },
            strict: true,
            allowPositionals: false,
          });
          const all = await targets.list();
          if (values.json) ctx.stdout.write(`${JSON.stringify(all)}\n`);
          else if (all.length === 0) ctx.stdout.write('no remotes (add one with: arlarena remote add NAME URL [--token-file F])\n');
          else for (const e of all) ctx.stdout.write(`${e.name.padEnd(16)} ${e.url}${e.hasToken ? '  token' : ''}\n`);
          return 0;
        }
        case 'test': {
          const { values, positionals } = parseCommandArgs({
            args: rest,
            options: { json: { type: 'boolean', default: false } },
            strict: true,
            allowPositionals: true,
          });
          if (positionals.length !== 1) throw new UsageError('remote test takes one NAME or URL');
          const client = new RayClient(await targets.resolve(positionals[0]!));
          const s = await client.summary();
          if (values.json) ctx.stdout.write(`${JSON.stringify({ url: client.url, ...s })}\n`);
          else
            ctx.stdout.write(
              `${client.url}: Ray ${s.rayVersion}, ${s.nodes} node${s.nodes === 1 ? '' : 's'}, CPUs ${s.cpus.free}/${s.cpus.total} free, GPUs ${s.gpus.free}/${s.gpus.total} free\n`,
            );
          return 0;
        }
        case 'remove': {
          const { positionals } = parseCommandArgs({ args: rest, options: {}, strict: true, allowPositionals: true });
          if (positionals.length !== 1) throw new UsageError('remote remove takes one NAME');
          if (!(await targets.remove(positionals[0]!))) throw new RemoteError(`no remote named "${positionals[0]}"`);
          ctx.stdout.write(`removed ${positionals[0]}\n`);
          return 0;
        }
        case 'verl':
          return (await import('./remoteVerl')).runVerl(rest, ctx);
        default:
          throw new UsageError(
            `remote: ${sub === undefined ? 'a sub-command is needed' : `unknown sub-command "${sub}"`}; one of add, list, test, remove, verl`,
          );
      }
    } catch (e) {
      if (e instanceof RemoteError) {
        ctx.stderr.write(`arlarena remote: ${e.message}\n`);
        return 1;
      }
      throw e;
    }
  },
};

export default remote;
