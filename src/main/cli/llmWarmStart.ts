/**
 * `arlarena warmstart --model hf:PATH …`: the warm start of an LLM run (behaviour cloning through the chat template,
 * app/llmWarmStart.ts), reached from the warmstart command when --model names a Hugging Face folder. Flags are
 * checked here, each refusal one line naming the flag, the value and the fix.
 */
import { join } from 'node:path';
import { parseLoraSpec, type LoraSettings } from '../../core/llm/lora';
import { silenceTfjsBanner } from '../compute/index';
import { initBackend } from '../compute/backends';
import { HfFolderError } from '../compute/models/hfFolder';
import { LlmWarmStartError, llmWarmStart } from '../app/llmWarmStart';
import { intArg, parseSets, resolveOrUsage } from './args';
import { UsageError, type CliContext } from './types';

/** The warmstart command's parsed flags (the subset this path reads). */
export interface LlmWarmStartFlags {
  readonly model: string;
  readonly env?: string;
  readonly lora?: string;
  readonly steps?: string;
  readonly batch?: string;
  readonly lr?: string;
  readonly history?: string;
  readonly seed?: string;
  readonly episodes?: string;
  readonly 'expert-episodes'?: string;
  readonly 'checkpoint-every'?: string;
  readonly 'max-new-tokens'?: string;
  readonly 'stop-after'?: string;
  readonly resume?: boolean;
  readonly out?: string;
  readonly set?: string[];
  readonly json?: boolean;
  /** Flags of the lab-model path that mean nothing here. */
  readonly updates?: string;
  readonly 'max-minutes'?: string;
}

export const LLM_WARMSTART_USAGE = `
With --model hf:PATH (a local Hugging Face folder: Qwen2, Qwen3 or Llama), behaviour-clone that checkpoint on the
env's expert turns through its chat template, resumably, and write DIR/model (a float32 checkpoint, with --lora the
adapters folded in: what \`arlarena train --model hf:DIR/model\` starts RL from), with --lora DIR/adapter (PEFT's
adapter folder), DIR/warmstart.json (recipe, losses, format validity before/after on held-out tasks) and
DIR/checkpoint (resume state).
  --lora SPEC          train LoRA adapters: r=16,alpha=32,dropout=0.05,targets=q_proj+v_proj (default: every weight)
  --steps N            BC steps (AdamW updates) in all (default 40); with --resume the run continues up to N
  --batch ROWS         expert turns per step (default 2)
  --lr X               learning rate (default 1e-3 with LoRA, 1e-5 without)
  --history K          prompt history window (default 0: small checkpoints have short contexts)
  --episodes N         held-out tasks for format validity before/after, first prompt, greedy (default 16; 0 = none)
  --expert-episodes N  expert episodes (training tasks) the rows come from (default 32)
  --checkpoint-every K write DIR/checkpoint every K steps (default 10) and at the end
  --max-new-tokens N   response budget of the format check (default 64)
  --stop-after U       stop after U steps of this invocation, checkpoint written (then --resume)
  --resume             continue DIR/checkpoint: the same flags and model folder give the weights of one straight run
  --out DIR            output folder (default <data-dir>/warmstart/<env>-hf-<folder name>)`;

function positive(name: string, raw: string | undefined, dflt: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} ${JSON.stringify(raw)}: expected a number > 0, e.g. 1e-3`);
  return n;
}

export async function runLlmWarmStart(v: LlmWarmStartFlags, args: readonly string[], ctx: CliContext): Promise<number> {
  const dir = v.model.slice('hf:'.length);
  if (dir === '') throw new UsageError('--model hf:PATH: give the model folder after "hf:", e.g. --model hf:/models/qwen2.5-0.5b');
  if (v.updates !== undefined) throw new UsageError('--updates is for the lab model; with --model hf:PATH give --steps N');
  if (v['max-minutes'] !== undefined)
    throw new UsageError('--max-minutes is for the lab model; with --model hf:PATH use --stop-after U and --resume');
  let lora: LoraSettings | null = null;
  if (v.lora !== undefined) {
    try {
      lora = parseLoraSpec(v.lora);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  const env = v.env ?? 'sokoban';
  // The run config gives the optimizer's betas, eps, weight decay and clip, and validates --set.
  const overrides = parseSets(v.set ?? []);
  const config = resolveOrUsage({ preset: 'sampo', env, overrides });
  const steps = intArg('steps', v.steps, 1) ?? 40;
  const checkpointEvery = intArg('checkpoint-every', v['checkpoint-every'], 1) ?? 10;
  const stopAfter = intArg('stop-after', v['stop-after'], 1);
  const json = v.json === true;
  const folderName =
    dir
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .pop() || 'model';
  const out = v.out ?? join(ctx.dataDir, 'warmstart', `${env}-hf-${folderName}`);
  const say = (s: string): void => {
    if (!json) ctx.stderr.write(s);
  };
  silenceTfjsBanner();
  const backend = await initBackend(config.compute.backend);
  say(
    `LLM warm start: ${dir} on ${env}, ${lora ? `LoRA r=${lora.rank} α=${lora.alpha}` : 'every weight'}, ${steps} steps on ${backend.detail}\n`,
  );
  try {
    const r = await llmWarmStart({
      modelDir: dir,
      lora,
      env,
      steps,
      batchRows: intArg('batch', v.batch, 1) ?? 2,
      lr: positive('lr', v.lr, lora ? 1e-3 : 1e-5),
      seed: intArg('seed', v.seed, 0) ?? config.seed,
      history: intArg('history', v.history, 0) ?? 0,
      episodes: intArg('expert-episodes', v['expert-episodes'], 1) ?? 32,
      optim: {
        beta1: config.optim.beta1,
        beta2: config.optim.beta2,
        eps: config.optim.eps,
        weightDecay: config.optim.weightDecay,
        gradClip: config.optim.gradClip,
      },
      checkpointEvery,
      evalTasks: intArg('episodes', v.episodes, 0) ?? 16,
      maxNewTokens: intArg('max-new-tokens', v['max-new-tokens'], 1) ?? 64,
      out,
      resume: v.resume === true,
      backend: backend.training,
      stopAfter,
      onEvent: say,
      onProgress: (p) => {
        if (ctx.isTTY && !json) ctx.stderr.write(`\rBC ${p.step}/${p.steps}  loss ${p.loss.toFixed(4)}\x1b[K`);
      },
    });
    if (ctx.isTTY && !json) ctx.stderr.write('\n');
    const fv = (f: typeof r.before): string => (f ? `${f.formatValid}/${f.tasks} (${(100 * f.ratio).toFixed(1)} %)` : '–');
    if (json)
      ctx.stdout.write(
        `${JSON.stringify({
          out: r.out,
          weightsDir: r.weightsDir || null,
          modelDir: r.modelDir || null,
          finished: r.finished,
          stepsDone: r.stepsDone,
          resumedFrom: r.resumedFrom,
          finalLoss: r.losses.at(-1) ?? null,
          weightsSha256: r.weightsSha256,
          rows: r.rows,
          rowsTooLong: r.rowsTooLong,
          formatValidity: { before: r.before, after: r.after },
          command: `arlarena warmstart ${args.join(' ')}`,
        })}\n`,
      );
    else
      ctx.stdout.write(
        [
          r.finished
            ? `wrote ${r.weightsDir === r.modelDir ? r.modelDir : `${r.weightsDir}, ${r.modelDir}`} and ${join(r.out, 'warmstart.json')} (trained variables SHA-256 ${r.weightsSha256})\nRL from it: arlarena train --model hf:${r.modelDir} …`
            : `stopped at step ${r.stepsDone} of ${steps}; checkpoint in ${join(r.out, 'checkpoint')} — continue with --resume`,
          `BC: ${r.stepsDone} steps${r.resumedFrom !== null ? ` (resumed at ${r.resumedFrom})` : ''}, loss ${r.losses[0]?.toFixed(4) ?? '–'} → ${r.losses.at(-1)?.toFixed(4) ?? '–'}, ${r.rows} expert rows`,
          `format validity on held-out tasks (first prompt, greedy): before ${fv(r.before)}, after ${fv(r.after)}`,
          '',
        ].join('\n'),
      );
    return 0;
  } catch (e) {
    if (e instanceof LlmWarmStartError || e instanceof HfFolderError) {
      ctx.stderr.write(`warmstart: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
