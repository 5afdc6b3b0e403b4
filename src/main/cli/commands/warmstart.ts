import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { intArg, modelArg, parseSets, resolveOrUsage } from '../args';
import { writeWarmStartDir } from '../../store/warmStartFiles';
import { setupCompute, silenceTfjsBanner } from '../../compute/index';
import { warmStartRecipe, envSpecOf } from '../../../core/training/warmstart';
import { evaluatePolicy, baselines } from '../../../core/training/evaluate';
import { formatInterval } from '../../../core/training/wilson';
import { serializeModel } from '../../../core/agent/checkpoint';
import { heldOutSeeds } from '../../../core/envs/index';
import { Rng, hashSeed } from '../../../core/util/rng';
import { appCommit, appVersion } from '../../platform/appInfo';
import { LLM_WARMSTART_USAGE, runLlmWarmStart } from '../llmWarmStart';

const usage = `Usage: arlarena warmstart [--env NAME] [--updates N] [--batch ROWS] [--model SIZE] [--history K] [--seed N] [--episodes N] [--max-minutes M] [--stop-after U] [--set key=value …] [--out DIR] [--json]
       arlarena warmstart --model hf:PATH [--lora SPEC] [--steps N] [--batch ROWS] [--lr X] [--resume] [--checkpoint-every K] [--episodes N] [--out DIR] [--json]

Behaviour-clone a warm-start policy from the testbed expert (the RL runs' π_ref) and write it with its tokenizer,
config, recipe, held-out results (greedy and sampled, 95 % Wilson intervals, random and expert baselines) and a
SHA-256 manifest.
  --env NAME      testbed environment (default sokoban)
  --updates N     BC updates (default: the config's warmStart.bcUpdates)
  --batch ROWS    expert turn rows per update (default warmStart.bcBatchRows)
  --model SIZE    nano | small | base | custom (default nano), or hf:PATH (below)
  --history K     prompt history window (default: the config's env.historyWindow)
  --episodes N    held-out tasks to evaluate on (default 200)
  --max-minutes M stop BC after the first update past M minutes of BC (the schedule — data, shuffle — stays that
                  of --updates; recipe.json records the updates done, and --stop-after reproduces the weights)
  --stop-after U  stop BC after U of the scheduled --updates (deterministic: same weights as a budgeted run
                  that stopped there)
  --out DIR       output folder (default <data-dir>/warmstart/<env>-<model>-k<K>)
  --json          one JSON object with the results instead of text
${LLM_WARMSTART_USAGE}`;

const warmstart: CliCommand = {
  summary: 'train a behaviour-cloning warm start (π_ref) and write it with a SHA-256 manifest',
  usage,
  async run(args, ctx) {
    const { values } = parseCommandArgs({
      args,
      options: {
        env: { type: 'string', default: 'sokoban' },
        updates: { type: 'string' },
        batch: { type: 'string' },
        model: { type: 'string' },
        history: { type: 'string' },
        seed: { type: 'string' },
        episodes: { type: 'string' },
        'max-minutes': { type: 'string' },
        'stop-after': { type: 'string' },
        set: { type: 'string', multiple: true },
        out: { type: 'string' },
        json: { type: 'boolean', default: false },
        lora: { type: 'string' },
        steps: { type: 'string' },
        lr: { type: 'string' },
        resume: { type: 'boolean', default: false },
        'checkpoint-every': { type: 'string' },
        'max-new-tokens': { type: 'string' },
        'expert-episodes': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    });
    // A Hugging Face folder: the LLM warm start (behaviour cloning through its chat template), resumable.
    if (values.model?.startsWith('hf:')) return runLlmWarmStart({ ...values, model: values.model }, args, ctx);
    for (const flag of ['lora', 'steps', 'lr', 'checkpoint-every', 'max-new-tokens', 'expert-episodes'] as const)
      if (values[flag] !== undefined)
        throw new UsageError(`--${flag} is for --model hf:PATH (an LLM warm start); the lab model takes --updates and --set`);
    if (values.resume)
      throw new UsageError('--resume is for --model hf:PATH (an LLM warm start); the lab model reproduces with --stop-after');
    const overrides = parseSets(values.set ?? []);
    overrides['warmStart.source'] = 'scratch';
    const updates = intArg('updates', values.updates, 0);
    const batch = intArg('batch', values.batch, 1);
    const history = intArg('history', values.history, 0);
    const seed = intArg('seed', values.seed, 0);
    const episodes = intArg('episodes', values.episodes, 1) ?? 200;
    const model = modelArg(values.model);
    const stopAfter = intArg('stop-after', values['stop-after'], 1);
    const maxMinutes = values['max-minutes'] === undefined ? undefined : Number(values['max-minutes']);
    if (maxMinutes !== undefined && !(Number.isFinite(maxMinutes) && maxMinutes > 0))
      throw new UsageError(`--max-minutes: expected a positive number, got "${values['max-minutes']}"`);
    if (updates !== undefined) overrides['warmStart.bcUpdates'] = updates;
    if (batch !== undefined) overrides['warmStart.bcBatchRows'] = batch;
    if (history !== undefined) overrides['env.historyWindow'] = history;
    if (seed !== undefined) overrides.seed = seed;
    if (model !== undefined) overrides['model.size'] = model;
    const config = resolveOrUsage({ preset: 'sampo', env: values.env!, overrides });
    // The folder is made before BC, not after it: an --out that cannot be one (under a file, no permission) is
    // known now, not after minutes of updates and the held-out evaluation.
    const out = values.out ?? join(ctx.dataDir, 'warmstart', `${config.env.name}-${config.model.size}-k${config.env.historyWindow}`);
    try {
      await mkdir(out, { recursive: true });
    } catch (e) {
      ctx.stderr.write(`arlarena warmstart: --out ${out}: cannot make this folder (${(e as Error).message}); nothing was trained\n`);
      return 1;
    }
    const json = values.json === true;
    const say = (s: string): void => {
      if (!json) ctx.stderr.write(s);
    };
    // The commit that trains, read before BC starts: an hour-long recipe must not record whatever HEAD (or a dirty
    // tree) the checkout has when it finishes.
    const commit = appCommit();
    silenceTfjsBanner();
    const compute = await setupCompute({ backend: config.compute.backend, rolloutEngine: config.compute.rolloutEngine });
    const clock = { now: () => performance.now() };
    const t0 = clock.now();
    say(
      `warm start: ${config.env.name}, model ${config.model.size}, history ${config.env.historyWindow}, ${config.warmStart.bcUpdates} BC updates × ${config.warmStart.bcBatchRows} rows on ${compute.info.detail}\n`,
    );
    // Stop rule checked before each update: after --stop-after updates, or once BC has used --max-minutes.
    let started = 0;
    const checkControl = async (): Promise<'continue' | 'stop'> => {
      if (stopAfter !== undefined && started >= stopAfter) return 'stop';
      if (maxMinutes !== undefined && started > 0 && clock.now() - t0 > maxMinutes * 60_000) return 'stop';
      started++;
      return 'continue';
    };
    const {
      tok,
      model: policy,
      report,
    } = await warmStartRecipe(config, clock, {
      checkControl,
      progressEvery: 10,
      onProgress: (p) => {
        if (ctx.isTTY && !json)
          ctx.stderr.write(`\rBC ${p.update}/${p.updates}  loss ${p.loss.toFixed(4)}  ${p.elapsedS.toFixed(0)} s\x1b[K`);
      },
    });
    if (ctx.isTTY && !json) ctx.stderr.write('\n');
    const weights = policy.getWeights();
    const spec = envSpecOf(config);
    const seeds = heldOutSeeds(episodes);
    const engine = await compute.createRolloutEngine(weights);
    const common = {
      engine,
      tokenizer: tok,
      spec,
      seeds,
      topP: 1,
      topK: 0,
      maxResponseTokens: config.rollout.maxResponseTokens,
      maxSeqLen: policy.config.maxSeqLen,
    };
    const tEval = clock.now();
    const greedy = (await evaluatePolicy({ ...common, temperature: 0, rng: new Rng(hashSeed(config.seed, 'warmstart-eval', 0)) })).summary;
    const sampled = (
      await evaluatePolicy({
        ...common,
        temperature: config.training.valTemperature,
        rng: new Rng(hashSeed(config.seed, 'warmstart-eval', 1)),
      })
    ).summary;
    await engine.dispose();
    const base = baselines(spec, seeds);
    const evalSeconds = (clock.now() - tEval) / 1000;
    const recipe = {
      env: config.env.name,
      envSettings: config.env.settings,
      maxSteps: config.env.maxSteps,
      historyWindow: config.env.historyWindow,
      modelSize: config.model.size,
      model: policy.config,
      seed: config.seed,
      bcUpdates: config.warmStart.bcUpdates,
      bcUpdatesDone: report.updates,
      reproduce: `arlarena warmstart --env ${config.env.name} --model ${config.model.size} --history ${config.env.historyWindow} --seed ${config.seed} --updates ${config.warmStart.bcUpdates} --batch ${config.warmStart.bcBatchRows} --set warmStart.bcLr=${config.warmStart.bcLr} --set model.geluForm=${policy.config.geluForm ?? 'tanh'}${report.updates < config.warmStart.bcUpdates ? ` --stop-after ${report.updates}` : ''}`,
      bcBatchRows: config.warmStart.bcBatchRows,
      bcLr: config.warmStart.bcLr,
      optim: {
        beta1: config.optim.beta1,
        beta2: config.optim.beta2,
        eps: config.optim.eps,
        weightDecay: config.optim.weightDecay,
        gradClip: config.optim.gradClip,
      },
      expertEpisodes: report.episodes,
      expertRows: report.rows,
      finalLoss: report.finalLoss,
      bcSeconds: report.seconds,
      backend: compute.info,
      appVersion: appVersion(),
      appCommit: commit,
      command: `arlarena warmstart ${args.join(' ')}`,
    };
    const heldout = {
      episodes,
      temperatureSampled: config.training.valTemperature,
      greedy,
      sampled,
      random: base.random,
      expert: base.expert,
      evalSeconds,
    };
    const enc = (x: unknown): Uint8Array => new TextEncoder().encode(`${JSON.stringify(x, null, 2)}\n`);
    const files = {
      ...serializeModel(weights, tok, { recipe: 'arlarena warmstart', env: config.env.name }),
      'recipe.json': enc(recipe),
      'heldout.json': enc(heldout),
    };
    const manifest = await writeWarmStartDir(out, files);
    policy.dispose();
    const total = (clock.now() - t0) / 1000;
    if (json) {
      ctx.stdout.write(
        `${JSON.stringify({ out, weightsSha256: manifest.files['weights.bin'].sha256, bcUpdates: report.updates, bcSeconds: report.seconds, totalSeconds: total, finalLoss: report.finalLoss, heldout })}\n`,
      );
    } else {
      ctx.stdout.write(
        [
          `wrote ${out} (weights.bin SHA-256 ${manifest.files['weights.bin'].sha256})`,
          `BC: ${report.updates} updates, final loss ${report.finalLoss.toFixed(4)}, ${report.seconds.toFixed(0)} s; evaluation ${evalSeconds.toFixed(0)} s`,
          `held-out success on ${episodes} tasks (95 % Wilson interval):`,
          `  greedy            ${formatInterval(greedy.success)}   valid format ${(100 * greedy.validFormatRatio).toFixed(1)} %`,
          `  sampled (T ${config.training.valTemperature})   ${formatInterval(sampled.success)}   valid format ${(100 * sampled.validFormatRatio).toFixed(1)} %`,
          `  random baseline   ${formatInterval(base.random)}`,
          `  expert baseline   ${formatInterval(base.expert)}`,
          '',
        ].join('\n'),
      );
    }
    return 0;
  },
};

export default warmstart;
