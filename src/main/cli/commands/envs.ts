/**
 * `arlarena envs` — list the testbed environments, show a task's first prompt, or replay an expert / random
 * episode (spec §3).
 */
import { buildPrompt, createEnv, ENV_CATALOG, expertEpisode, listEnvs, randomEpisode, UnknownEnvError } from '../../../core/envs/index';
import { EnvSettingsError } from '../../../core/envs/settings';
import { Rng } from '../../../core/util/rng';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';

const USAGE = `Usage:
  arlarena envs [--json]                                   list the environments
  arlarena envs show <env> [--seed N] [--history K] [--set key=value ...] [--json]
                                                           the task for a seed: render and first prompt
  arlarena envs play <env> [--seed N] [--random] [--history K] [--set key=value ...] [--json]
                                                           replay the expert's (or a random) episode

Environments: ${ENV_CATALOG.map((e) => e.name).join(', ')}`;

function parseSetting(raw: string): [string, unknown] {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set ${raw}: expected key=value, e.g. --set size=7`);
  const key = raw.slice(0, eq);
  const v = raw.slice(eq + 1);
  if (v === 'true' || v === 'false') return [key, v === 'true'];
  const n = Number(v);
  return [key, v.trim() !== '' && Number.isFinite(n) ? n : v];
}

function intArg(name: string, raw: string | undefined, dflt: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} ${raw}: expected a non-negative integer`);
  return n;
}

const command: CliCommand = {
  summary: 'list the testbed environments; show a task or replay an expert episode',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        seed: { type: 'string' },
        history: { type: 'string' },
        random: { type: 'boolean' },
        set: { type: 'string', multiple: true },
      },
      strict: true,
    });
    const { values, positionals } = parsed;
    const out = (s: string) => ctx.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
    const sub = positionals[0];
    if (sub === undefined || sub === 'list') {
      const envs = listEnvs();
      if (values.json) {
        for (const e of envs) out(JSON.stringify(e));
        return 0;
      }
      for (const e of envs) {
        out(`${e.name.padEnd(11)} ${e.label} — ${e.description}`);
        out(`${''.padEnd(11)} tests: ${e.tests}`);
        out(`${''.padEnd(11)} reward ${e.rewardRange[0]}…${e.rewardRange[1]}, horizon ${e.horizon}, solvable: ${e.solvable}`);
        const settings = Object.entries(e.settings as Record<string, { default: unknown }>).map(([k, v]) => `${k}=${String(v.default)}`);
        out(`${''.padEnd(11)} settings: ${settings.join(' ')}`);
      }
      return 0;
    }
    if (sub !== 'show' && sub !== 'play') throw new UsageError(`unknown sub-command "${sub}"; valid: list, show, play`);
    const name = positionals[1];
    if (name === undefined) throw new UsageError(`${sub}: name an environment (${ENV_CATALOG.map((e) => e.name).join(', ')})`);
    const settings = Object.fromEntries((values.set ?? []).map(parseSetting));
    const seed = intArg('seed', values.seed, 0);
    const k = intArg('history', values.history, 2);
    let env;
    try {
      env = createEnv(name, settings);
    } catch (e) {
      if (e instanceof UnknownEnvError || e instanceof EnvSettingsError) throw new UsageError(e.message);
      throw e;
    }
    if (sub === 'show') {
      const obs = env.reset(seed);
      const prompt = buildPrompt(env, obs, [], k);
      if (values.json) {
        out(JSON.stringify({ env: name, seed, taskId: env.taskId(), taskType: env.taskType(), ...obs, prompt, render: env.render() }));
        return 0;
      }
      out(`${env.taskId()} (${env.taskType()})\n\n${prompt}`);
      return 0;
    }
    const ep = values.random ? randomEpisode(env, seed, new Rng(seed), k) : expertEpisode(env, seed, k);
    if (values.json) {
      out(JSON.stringify(ep));
      return 0;
    }
    out(`${ep.taskId} (${ep.taskType}) — ${values.random ? 'random' : 'expert'}`);
    ep.turns.forEach((t, i) => {
      out(`\n--- turn ${i + 1}\n${t.observation}\n> ${t.response}\n  reward ${t.reward}${t.actionValid ? '' : ' (invalid)'}`);
    });
    out(`\nwon ${ep.won}, return ${ep.episodeReturn.toFixed(2)}, score ${ep.score}, turns ${ep.turns.length}`);
    return 0;
  },
};

export default command;
