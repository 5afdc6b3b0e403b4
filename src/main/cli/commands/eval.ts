import { UsageError, parseCommandArgs, type CliCommand } from '../types';
import { intArg } from '../args';
import { RunStore } from '../../store/runStore';
import { setupCompute, silenceTfjsBanner } from '../../compute/index';
import { policyFromCheckpoint, envSpecOf } from '../../../core/training/trainer';
import { evaluatePolicy, baselines } from '../../../core/training/evaluate';
import { formatInterval } from '../../../core/training/wilson';
import { heldOutSeeds } from '../../../core/envs/index';
import { Rng, hashSeed } from '../../../core/util/rng';
import type { RunConfig } from '../../../core/config/types';
import type { RolloutEngine } from '../../../core/agent/engine';
import type { PromptCodec } from '../../../core/agent/policy';
import type { Tokenizer } from '../../../core/agent/tokenizer';
import { LlmPromptCodec } from '../../../core/llm/trainerPolicy';
import { createLlmRolloutEngine } from '../../compute/llmRollout';
import { openHfRunPolicy } from '../../compute/models/hfRunExport';

const usage = `Usage: arlarena eval RUN [--episodes N] [--temperature T] [--step S] [--model-folder PATH] [--json]

Held-out success of a run's latest checkpoint (or the one saved at step S) on N fixed held-out tasks (group size 1), with a 95 % Wilson
interval, next to the random and expert baselines on the same tasks.
  RUN              a run id, a unique id prefix, the short id the app shows (the id's last 6 characters), or a
                   unique run name (see arlarena runs)
  --episodes N     held-out tasks (default 200)
  --temperature T  sampling temperature (default: the run's training.valTemperature, 0.6; 0 = greedy)
  --step S         evaluate the checkpoint saved at step S (the last two are kept; arlarena show lists them), e.g.
                   to compare two runs at the same step
  --model-folder PATH  a run of a Hugging Face model (train --model hf:…): its base folder here (default: the path the
                   run recorded); checked against the run's hashes, the checkpoint's adapters or weights go on it
  --json           one JSON object instead of text`;

const evalCmd: CliCommand = {
  summary: "held-out success of a run's latest checkpoint with a 95 % interval, beside random and expert",
  usage,
  async run(args, ctx) {
    const { values, positionals } = parseCommandArgs({
      args,
      options: {
        episodes: { type: 'string' },
        temperature: { type: 'string' },
        step: { type: 'string' },
        'model-folder': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length !== 1) throw new UsageError('expected exactly one RUN id (see arlarena runs)');
    const episodes = intArg('episodes', values.episodes, 1) ?? 200;
    const atStep = intArg('step', values.step, 0);
    let temperature: number | undefined;
    if (values.temperature !== undefined) {
      temperature = Number(values.temperature);
      if (!(temperature >= 0) || !Number.isFinite(temperature))
        throw new UsageError(`--temperature ${JSON.stringify(values.temperature)}: expected a number ≥ 0`);
    }
    const store = await RunStore.open(ctx.dataDir);
    let record;
    let ck;
    try {
      try {
        record = await store.findRun(positionals[0]);
      } catch (e) {
        // A run that is not there is a failure (exit 1), as in show, check, export and resume, not bad usage.
        ctx.stderr.write(`arlarena eval: ${(e as Error).message}\n`);
        return 1;
      }
      if (atStep !== undefined) {
        ck = await store.loadCheckpointAt(record.id, atStep);
        if (!ck)
          throw new UsageError(
            `run ${record.id} has no checkpoint at step ${atStep}; kept: ${(await store.checkpointSteps(record.id)).join(', ') || 'none'}`,
          );
      } else {
        ck = await store.loadLatestCheckpoint(record.id);
      }
    } finally {
      await store.close();
    }
    if (!ck) {
      ctx.stderr.write(`arlarena eval: run ${record.id} has no checkpoint yet (status ${record.status}); nothing to evaluate\n`);
      return 1;
    }
    const config = record.config as unknown as RunConfig;
    const T = temperature ?? config.training.valTemperature;
    silenceTfjsBanner();
    const compute = await setupCompute({ backend: config.compute.backend, rolloutEngine: config.compute.rolloutEngine });
    let engine: RolloutEngine;
    let tok: Tokenizer | PromptCodec;
    let maxSeqLen: number;
    let release = (): void => undefined;
    if (record.model) {
      // A Hugging Face run: its base folder (hash-checked) with the checkpoint's adapters or weights, sampled by the
      // engine its training sampled with (compute.rolloutEngine), prompted through the chat template.
      let hf;
      try {
        hf = await openHfRunPolicy(record, ck, values['model-folder'] !== undefined ? { modelFolder: values['model-folder'] } : {});
      } catch (e) {
        ctx.stderr.write(`arlarena eval: ${(e as Error).message}\n`);
        return 1;
      }
      release = () => hf.dispose();
      engine = (
        await createLlmRolloutEngine(hf.policy, {
          engine: config.compute.rolloutEngine,
          precision: config.compute.rolloutPrecision,
          gpu: compute.info.training === 'tensorflow-gpu',
        })
      ).engine;
      tok = new LlmPromptCodec(hf.policy);
      maxSeqLen = config.model.maxSeqLen;
    } else {
      if (values['model-folder'] !== undefined) throw new UsageError('--model-folder applies to runs of a Hugging Face model only');
      const lab = policyFromCheckpoint(config, ck);
      engine = await compute.createRolloutEngine(lab.weights);
      tok = lab.tok;
      maxSeqLen = lab.weights.config.maxSeqLen;
    }
    const spec = envSpecOf(config);
    const seeds = heldOutSeeds(episodes);
    const t0 = performance.now();
    const { summary } = await evaluatePolicy({
      engine,
      tokenizer: tok,
      spec,
      seeds,
      temperature: T,
      topP: config.rollout.topP,
      topK: config.rollout.topK,
      maxResponseTokens: config.rollout.maxResponseTokens,
      maxSeqLen,
      rng: new Rng(hashSeed(config.seed, 'cli-eval', ck.step)),
    });
    await engine.dispose();
    release();
    const base = baselines(spec, seeds);
    const seconds = (performance.now() - t0) / 1000;
    if (values.json) {
      ctx.stdout.write(
        `${JSON.stringify({ runId: record.id, step: ck.step, env: spec.name, episodes, temperature: T, policy: summary, random: base.random, expert: base.expert, seconds })}\n`,
      );
    } else {
      ctx.stdout.write(
        [
          `${record.id} at step ${ck.step} · ${spec.name} · ${episodes} held-out tasks · T ${T}`,
          `  policy   ${formatInterval(summary.success)}   score ${summary.scoreMean.toFixed(3)}   valid format ${(100 * summary.validFormatRatio).toFixed(1)} %`,
          `  random   ${formatInterval(base.random)}`,
          `  expert   ${formatInterval(base.expert)}`,
          ...Object.entries(summary.byTaskType)
            .filter(() => Object.keys(summary.byTaskType).length > 1)
            .map(([k, iv]) => `  · ${k.padEnd(14)} ${formatInterval(iv)}`),
          '',
        ].join('\n'),
      );
    }
    return 0;
  },
};

export default evalCmd;
