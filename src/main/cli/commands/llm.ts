/**
 * `arlarena llm` — a local Hugging Face model folder (Qwen2 / Qwen3 / Llama) in the lab: check it, estimate what
 * training it needs, and sample the policy's answer to an environment's prompt through its chat template.
 * Never downloads anything. Training such a model through `arlarena train` is not wired yet (docs/guides/llm.md).
 */
import { freemem, totalmem } from 'node:os';
import { buildPrompt, createEnv, ENV_CATALOG, parseResponse } from '../../../core/envs/index';
import { HfCausalLM } from '../../../core/llm/causalLm';
import { LoraAdapters, parseLoraSpec, type LoraSettings } from '../../../core/llm/lora';
import { estimateLlmMemory } from '../../../core/llm/memory';
import { gib, memSize, paramCount } from '../../../core/llm/memoryFit';
import { LlmPolicy } from '../../../core/llm/policy';
import { Rng } from '../../../core/util/rng';
import { initBackend } from '../../compute/backends';
import { HfFolderError, inspectHfFolder, loadHfFolder, loadPeftAdapter } from '../../compute/models/hfFolder';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';

const USAGE = `Usage:
  arlarena llm inspect <folder> [--lora r=16,alpha=32,...] [--rows N] [--seq-len T] [--response-tokens R] [--json]
      check a Hugging Face model folder (config.json, safetensors headers, tokenizer, chat template) without
      reading the weights; parameter count and the memory a training run needs (full or LoRA) vs this machine,
      for --seq-len tokens a row (default 1024; at most the model's max_position_embeddings)
  arlarena llm sample <folder> [--env ENV] [--seed N] [--adapter DIR] [--temperature T] [--max-new-tokens N] [--json]
      load the weights and answer the env's first prompt (chat template, KV cache); --adapter loads a PEFT LoRA folder;
      --temperature 0 (the default) is greedy, --max-new-tokens defaults to 128, --seed to 0

Supported: Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM; float32, bfloat16 and float16 safetensors (one file
or sharded); tokenizer.json + tokenizer_config.json with a chat template. Environments: ${ENV_CATALOG.map((e) => e.name).join(', ')}`;

function num(name: string, raw: string | undefined, dflt: number, min: number, integer = true): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
    throw new UsageError(`--${name} ${raw}: expected ${integer ? 'an integer' : 'a number'} ≥ ${min}`);
  return n;
}

const command: CliCommand = {
  summary: 'check a local Hugging Face model folder (Qwen2/Qwen3/Llama), estimate its memory, sample from it',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({
      args,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        lora: { type: 'string' },
        rows: { type: 'string' },
        'seq-len': { type: 'string' },
        'response-tokens': { type: 'string' },
        env: { type: 'string' },
        seed: { type: 'string' },
        adapter: { type: 'string' },
        temperature: { type: 'string' },
        'max-new-tokens': { type: 'string' },
      },
    });
    const [sub, dir, ...extra] = parsed.positionals;
    if (sub !== 'inspect' && sub !== 'sample')
      throw new UsageError(`llm: expected "inspect" or "sample", got ${sub === undefined ? 'nothing' : JSON.stringify(sub)}`);
    if (!dir) throw new UsageError(`llm ${sub}: give the model folder (the one holding config.json)`);
    if (extra.length) throw new UsageError(`llm ${sub}: unexpected argument ${JSON.stringify(extra[0])}`);
    const v = parsed.values;
    const out = (s: string): void => void ctx.stdout.write(`${s}\n`);
    try {
      if (sub === 'inspect') {
        let lora: LoraSettings | null = null;
        if (v.lora !== undefined) {
          try {
            lora = parseLoraSpec(v.lora);
          } catch (e) {
            throw new UsageError((e as Error).message);
          }
        }
        const info = await inspectHfFolder(dir);
        // A run cannot train past the model's context (the preflight refuses model.maxSeqLen above it), so the
        // estimate is for at most max_position_embeddings tokens a row, whether --seq-len asked more or the default did.
        const askedSeqLen = num('seq-len', v['seq-len'], 1024, 2);
        const maxContext = info.config.maxPositionEmbeddings;
        const seqLen = Math.min(askedSeqLen, maxContext);
        const askedResponse = num('response-tokens', v['response-tokens'], 256, 1);
        // The response is part of the row: at most its length less one prompt token.
        const work = { rows: num('rows', v.rows, 8, 1), seqLen, responseTokens: Math.min(askedResponse, seqLen - 1) };
        const contextNote =
          seqLen < askedSeqLen ? ` (the model's context, config.json max_position_embeddings ${maxContext}; ${askedSeqLen} asked)` : '';
        const est = estimateLlmMemory(info.config, work, lora);
        const dtypes = [...new Set([...info.headers.values()].flatMap((h) => h.tensors.map((t) => t.dtype)))];
        const machine = { totalBytes: totalmem(), freeBytes: freemem() };
        const fits = est.totalBytes <= 0.8 * machine.totalBytes;
        const record = {
          dir: info.dir,
          config: info.config,
          weightFiles: info.weightFiles,
          dtypes,
          tokenizerHashes: info.tokenizerHashes,
          chatTemplate: info.tokenizer.hasChatTemplate,
          lora,
          work,
          askedSeqLen,
          memory: est,
          machine,
          fits,
        };
        if (v.json) out(JSON.stringify(record));
        else {
          const c = info.config;
          out(
            `${info.dir}: ${c.architecture}, ${paramCount(est.params)} parameters (${dtypes.join('/')} in ${info.weightFiles.length} file(s), computed in float32)`,
          );
          out(
            `  layers ${c.numLayers}, hidden ${c.hiddenSize}, heads ${c.numHeads} (KV ${c.numKvHeads}, head_dim ${c.headDim}), MLP ${c.intermediateSize}, vocab ${c.vocabSize}, rope ${c.rope.type} θ=${c.ropeTheta}${c.qkNorm ? ', q/k norm' : ''}${c.tieWordEmbeddings ? ', tied embeddings' : ''}`,
          );
          out(
            `  tokenizer: ids up to ${info.tokenizer.maxTokenId}, chat template ${info.tokenizer.hasChatTemplate ? 'present' : 'MISSING (needed for agent prompts)'}`,
          );
          out(
            `  training ${lora ? `LoRA r=${lora.rank} α=${lora.alpha} on ${lora.targetModules.join(',')} (${paramCount(est.trainableParams)} trainable)` : 'full fine-tuning'}, ${work.rows} rows × ${work.seqLen} tokens${contextNote} (${work.responseTokens} response${work.responseTokens < askedResponse ? `, ${askedResponse} asked` : ''}): weights ${memSize(est.weightsBytes)} + ${lora ? 'adapters' : 'gradients and AdamW'} ${memSize(est.trainingStateBytes)} + activations ${memSize(est.activationBytes)} = ${memSize(est.totalBytes)}`,
          );
          out(
            `  this machine: ${gib(machine.totalBytes)} (${gib(machine.freeBytes)} free) — ${fits ? 'fits' : 'does NOT fit (over 80 % of memory): use --lora, fewer rows or a shorter context'}`,
          );
        }
        return fits ? 0 : 1;
      }
      const envName = v.env ?? 'sokoban';
      if (!ENV_CATALOG.some((e) => e.name === envName))
        throw new UsageError(`--env ${envName}: unknown; known: ${ENV_CATALOG.map((e) => e.name).join(', ')}`);
      const seed = num('seed', v.seed, 0, 0);
      const temperature = num('temperature', v.temperature, 0, 0, false);
      const maxNewTokens = num('max-new-tokens', v['max-new-tokens'], 128, 1);
      const backend = await initBackend('auto');
      const folder = await loadHfFolder(dir);
      const model = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: false });
      let lora: LoraAdapters | null = null;
      if (v.adapter) {
        const a = await loadPeftAdapter(v.adapter);
        lora = LoraAdapters.fromTensors(model, a.settings, a.tensors);
      }
      const policy = new LlmPolicy(model, folder.tokenizer, lora);
      const env = createEnv(envName);
      const obs = env.reset(seed);
      const userText = buildPrompt(env, obs, [], ENV_CATALOG.find((e) => e.name === envName)!.historyWindow);
      const prompt = policy.promptIds(userText);
      // The prompt and the answer share the model's context: a checkpoint with a short one (a test model's 512
      // positions hold Sokoban's ~500-token prompt and little more) answers in the room left, or not at all.
      const context = folder.config.maxPositionEmbeddings;
      const room = context - prompt.length;
      const contextNote = `config.json max_position_embeddings ${context}`;
      if (room < 1) {
        lora?.dispose();
        model.dispose();
        ctx.stderr.write(
          `llm sample: the ${envName} prompt is ${prompt.length} tokens (chat template), which fills the model's context (${contextNote}); nothing is left to answer in: sample a model with a longer context\n`,
        );
        return 1;
      }
      const newTokens = Math.min(maxNewTokens, room);
      if (newTokens < maxNewTokens)
        ctx.stderr.write(
          `llm sample: --max-new-tokens ${maxNewTokens} cut to ${newTokens}: the prompt's ${prompt.length} tokens leave ${room} of the model's context (${contextNote})\n`,
        );
      const g = await policy
        .engine()
        .generate([prompt], { maxNewTokens: newTokens, temperature, topP: 1, topK: 0, stopIds: [] }, new Rng(seed));
      const response = policy.decode(g.tokens[0]);
      const parsedAction = parseResponse(envName, response);
      lora?.dispose();
      model.dispose();
      const record = {
        backend: backend.training,
        promptTokens: prompt.length,
        responseTokens: g.tokens[0].length,
        finish: g.finish[0],
        response,
        action: parsedAction,
        weightHashes: folder.weightHashes,
      };
      if (v.json) out(JSON.stringify(record));
      else {
        out(
          `[${backend.detail}] ${folder.config.architecture}; prompt ${prompt.length} tokens (chat template), response ${g.tokens[0].length} tokens (${g.finish[0]}):`,
        );
        out(response);
        out(`→ format ${parsedAction.formatValid ? 'valid' : 'invalid'}, the env receives ${JSON.stringify(parsedAction.applied)}`);
      }
      return 0;
    } catch (e) {
      if (e instanceof UsageError) throw e;
      if (e instanceof HfFolderError || (e as Error).name === 'LlmConfigError' || (e as Error).name === 'TokenizerFolderError') {
        ctx.stderr.write(`llm ${sub}: ${(e as Error).message}\n`);
        return 1;
      }
      throw e;
    }
  },
};

export default command;
