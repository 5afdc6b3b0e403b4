import { resolve } from 'node:path';
import { parseCommandArgs, UsageError, type CliCommand } from '../types';
import { intArg, modelArg, parseSets, progressLine, resolveOrUsage } from '../args';
import { trainInStore } from '../../app/trainRun';
import { resolveTarget } from '../../remote/computeTarget';
import { parseLoraSpec } from '../../../core/llm/lora';
import { detectComputeBackend } from '../../compute/detect';
import { HfFolderError, inspectHfFolder } from '../../compute/models/hfFolder';
import { expandHome, preflightHfRunHere } from '../../compute/models/hfRunModel';

const usage = `Usage: arlarena train [--preset NAME] [--env NAME] [--steps N] [--seed N] [--model SIZE|hf:PATH] [--lora SPEC]
                      [--set key=value …] [--name TEXT] [--max-minutes M] [--on NAME|URL] [--json]

Train one run (behaviour-cloning warm start, then RL) in the run store the app uses, and print its run id.
  --preset NAME   method preset (default sampo; see arlarena algo presets)
  --env NAME      testbed environment (default sokoban; see arlarena envs)
  --steps N       RL steps (default: the preset's training.steps)
  --seed N        master seed (default 1)
  --model SIZE    nano | small | base | custom (custom needs --set model.dModel=… etc.)
  --model hf:PATH a local Hugging Face model folder (Qwen2 / Qwen3 / Llama: config.json, safetensors, tokenizer.json),
                  prompted through its chat template, sampled with a KV cache (on the CPU its ONNX export on
                  onnxruntime, re-exported after each update; on a GPU, or with --set compute.rolloutEngine=tfjs, the
                  tfjs engine on the trainer's own weights). Sets model.source and, unless --set gives them,
                  compute.logProbEngine=trainer, compute.refLogProbEngine=trainer, compute.workers=1,
                  warmStart.source=none and model.maxSeqLen = min(max_position_embeddings, 2048). Refused before any run exists when the folder cannot be
                  trained here (no config.json, unsupported architecture, truncated weights, a tokenizer that does not
                  fit the vocabulary) or the run's memory estimate does not fit this machine (docs/guides/llm.md)
  --lora SPEC     LoRA adapters on a hf: model, e.g. r=16,alpha=32[,dropout=0.05,targets=q_proj+v_proj] (defaults:
                  alpha 32, dropout 0.05, all seven projections); without it every weight is trained
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
        lora: { type: 'string' },
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
    const hfPath = values.model?.startsWith('hf:') ? values.model.slice(3) : undefined;
    const model = hfPath === undefined ? modelArg(values.model) : undefined;
    const maxMinutes = values['max-minutes'] === undefined ? undefined : Number(values['max-minutes']);
    if (maxMinutes !== undefined && !(maxMinutes > 0))
      throw new UsageError(`--max-minutes must be a number > 0, got "${values['max-minutes']}"`);
    if (steps !== undefined) overrides['training.steps'] = steps;
    if (seed !== undefined) overrides.seed = seed;
    if (model !== undefined) overrides['model.size'] = model;
    if (values.lora !== undefined && hfPath === undefined)
      throw new UsageError('--lora adapts a pretrained model: give --model hf:PATH as well (or drop --lora)');
    if (hfPath !== undefined) {
      if (values.on !== undefined) throw new UsageError('--model hf:PATH trains on this machine only; drop --on');
      await hfOverrides(hfPath, values.lora, overrides);
    }
    const config = resolveOrUsage({ preset: values.preset!, env: values.env!, overrides });
    const json = values.json === true;
    if (hfPath !== undefined) {
      // Everything that can refuse the folder or the run's size, before a run record exists (sessions.start runs it too).
      const pre = await preflightHfRunHere(config, () => detectComputeBackend().training).catch((e: unknown) => {
        throw e instanceof HfFolderError ? new UsageError(e.message) : e;
      });
      if (!json)
        ctx.stderr.write(
          `model: ${pre.model.architecture}, ${pre.model.params} parameters (${pre.model.trainableParams} trained); memory ${pre.memory}\n`,
        );
    }
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

/**
 * --model hf:PATH [--lora SPEC] as config overrides: the source (an absolute path, so the training worker finds it),
 * LoRA's four fields, and the settings a hf run needs unless the user set them (validation explains any conflict).
 */
async function hfOverrides(
  pathArg: string,
  loraSpec: string | undefined,
  overrides: Record<string, string | number | boolean>,
): Promise<void> {
  if (!pathArg) throw new UsageError('--model hf:PATH: give the model folder after hf: (e.g. --model hf:./Qwen2.5-0.5B-Instruct)');
  const dir = resolve(expandHome(pathArg));
  const info = await inspectHfFolder(dir).catch((e: unknown) => {
    throw e instanceof HfFolderError || (e as Error).name === 'LlmConfigError' || (e as Error).name === 'TokenizerFolderError'
      ? new UsageError((e as Error).message.split('\n')[0])
      : e;
  });
  overrides['model.source'] = `hf:${info.dir}`;
  const needed: Record<string, string | number> = {
    'compute.logProbEngine': 'trainer',
    'compute.refLogProbEngine': 'trainer',
    'compute.workers': 1,
    'warmStart.source': 'none',
    'model.maxSeqLen': Math.min(info.config.maxPositionEmbeddings, 2048),
  };
  for (const [k, v] of Object.entries(needed)) if (!(k in overrides)) overrides[k] = v;
  if (loraSpec !== undefined) {
    let lora: ReturnType<typeof parseLoraSpec>;
    try {
      lora = parseLoraSpec(loraSpec);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    overrides['model.lora.rank'] = lora.rank;
    overrides['model.lora.alpha'] = lora.alpha;
    overrides['model.lora.dropout'] = lora.dropout;
    overrides['model.lora.targets'] = lora.targetModules.join('+');
  }
}
