/**
 * Hugging Face model folders as training runs see them (config model.source = hf:PATH):
 *
 *   preflightHfRun   before a run exists: the folder is a model the lab can train (config.json, architecture,
 *                    tokenizer vs vocabulary, every weight file whole — inspectHfFolder's checks; a chat template),
 *                    the context fits the checkpoint, and the memory estimate (core/llm/memory.ts) fits what the
 *                    training backend can hold (core/llm/memoryFit.ts). The weights' bytes are not read: the
 *                    training job hashes every file as it loads it (loadHfFolder) for the run record, and no caller
 *                    of the preflight uses hashes. Any refusal is an HfFolderError with the reason and the fix,
 *                    thrown before the store is touched.
 *   preflightHfRunHere  preflightHfRun against this machine: what `train --model hf:` and sessions.start both run,
 *                    so the CLI and the app refuse the same folders in the same sentence.
 *   hfModelRecord    RunRecord.model: the folder, config.json, the SHA-256 of each weight and tokenizer file, the
 *                    parameter counts and the LoRA settings — what a bundle carries instead of the base weights.
 *   hfModelSummary   that entry but the hashes: what the preflight reports (train's 'model:' line).
 *   checkHfFolder    a folder against a recorded identity (reproduce, resume on another machine): refused naming the
 *                    first file whose hash differs.
 *   hfModelLoader    the trainer's HfModelLoader (core/training/hfRun.ts): loadHfFolder, tensors and hashes.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { homedir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import type { RunConfig } from '../../../core/config/types';
import { llmParamCount, type LlmConfig } from '../../../core/llm/config';
import { loraParamCount, type LoraSettings } from '../../../core/llm/lora';
import { estimateLlmMemory } from '../../../core/llm/memory';
import { memoryFit, memSize, type MachineMemory, type MemoryFit } from '../../../core/llm/memoryFit';
import { hashMismatch, hfSourceOf, loraOf, type HfIdentity, type HfModelLoader } from '../../../core/training/hfRun';
import { activationBudgetOf, rowActivationBytes } from '../../../core/training/chunking';
import type { HfModelRecord } from '../../../shared/api';
import { HfFolderError, inspectHfFolder, loadHfFolder, type HfFolderInfo } from './hfFolder';

export const hfModelLoader: HfModelLoader = (path) => loadHfFolder(path);

/** `hf:~/models/x` and a scrubbed bundle's `~/…` name the home folder. */
export function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 24 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Check a folder (headers only, no tensor read) and hash every weight file. */
export async function identifyHfFolder(dir: string): Promise<{ info: HfFolderInfo; identity: HfIdentity }> {
  const info = await inspectHfFolder(expandHome(dir));
  const weights: Record<string, string> = {};
  for (const f of info.weightFiles) weights[f] = await sha256File(join(info.dir, f));
  return { info, identity: { architecture: info.config.architecture, weights, tokenizer: { ...info.tokenizerHashes } } };
}

export type HfModelSummary = Omit<HfModelRecord, 'weights' | 'tokenizer'>;

/** The run record's model entry but the files' hashes: what config.json and the run's config say. */
export function hfModelSummary(info: Pick<HfFolderInfo, 'dir' | 'config' | 'rawConfig'>, config: RunConfig): HfModelSummary {
  const lora = loraOf(config);
  const params = llmParamCount(info.config);
  return {
    path: info.dir,
    architecture: info.config.architecture,
    config: { ...info.rawConfig },
    params,
    trainableParams: lora ? loraParamCount(info.config, lora) : params,
    lora: lora ? { rank: lora.rank, alpha: lora.alpha, dropout: lora.dropout, targets: [...lora.targetModules] } : null,
  };
}

/** The run record's model entry. */
export function hfModelRecord(
  info: Pick<HfFolderInfo, 'dir' | 'config' | 'rawConfig'>,
  identity: HfIdentity,
  config: RunConfig,
): HfModelRecord {
  const m = hfModelSummary(info, config);
  return {
    path: m.path,
    architecture: identity.architecture,
    config: m.config,
    weights: { ...identity.weights },
    tokenizer: { ...identity.tokenizer },
    params: m.params,
    trainableParams: m.trainableParams,
    lora: m.lora,
  };
}

/** The recorded identity of a run's model entry. */
export function identityOf(rec: HfModelRecord): HfIdentity {
  return { architecture: rec.architecture, weights: rec.weights, tokenizer: rec.tokenizer };
}

/** Refuse a folder whose files are not the recorded model's, naming the first file that differs. */
export async function checkHfFolder(dir: string, recorded: HfModelRecord): Promise<{ info: HfFolderInfo; identity: HfIdentity }> {
  const found = await identifyHfFolder(dir);
  const diff = hashMismatch(identityOf(recorded), found.identity) ?? configMismatch(recorded.config, found.info.rawConfig);
  if (diff)
    throw new HfFolderError(
      `${found.info.dir} is not the base model the run trained from: ${diff}; give the folder of that exact checkpoint (--model-folder PATH)`,
    );
  return found;
}

/** config.json against the recorded one: the first key whose value differs, or null. */
function configMismatch(recorded: Record<string, unknown>, found: Record<string, unknown>): string | null {
  for (const k of [...new Set([...Object.keys(recorded), ...Object.keys(found)])].sort()) {
    const a = JSON.stringify(recorded[k]);
    const b = JSON.stringify(found[k]);
    if (a !== b) return `config.json: ${k} was ${a ?? 'absent'}, is ${b ?? 'absent'}`;
  }
  return null;
}

/** What the memory estimate is for: one differentiated chunk's rows of seqLen tokens, and whether π_ref is a copy. */
export interface HfRunWork {
  rows: number;
  seqLen: number;
  responseTokens: number;
  refCopy: boolean;
}

/**
 * The chunk a run of `config` differentiates on this model: as many rows of `seqLen` tokens (model.maxSeqLen unless
 * given) as the trainer's activation budget lets a chunk hold, at most a mini-batch, and a frozen copy of the
 * weights when a full fine-tuning run has a KL term (π_ref; LoRA bypasses its adapters instead).
 */
export function hfRunWork(c: LlmConfig, config: RunConfig, seqLen = config.model.maxSeqLen): HfRunWork {
  const shape = { nLayers: c.numLayers, nHeads: c.numHeads, dModel: c.hiddenSize, dFF: c.intermediateSize, vocabSize: c.vocabSize };
  const perRow = rowActivationBytes(shape, seqLen);
  const rows = Math.max(1, Math.min(config.optim.miniBatchRows, Math.floor((activationBudgetOf(config) * 1024 * 1024) / perRow)));
  const refCopy = loraOf(config) === null && (config.algorithm.kl.enabled || config.algorithm.kl.inReward);
  return { rows, seqLen, responseTokens: config.rollout.maxResponseTokens, refCopy };
}

/** The memory of `work` on this model (core/llm/memory.ts), π_ref's copy counted in the weights. */
export function hfWorkMemory(c: LlmConfig, work: HfRunWork, lora: LoraSettings | null): ReturnType<typeof estimateLlmMemory> {
  const est = estimateLlmMemory(c, { rows: work.rows, seqLen: work.seqLen, responseTokens: work.responseTokens }, lora);
  if (!work.refCopy) return est;
  return { ...est, weightsBytes: 2 * est.weightsBytes, totalBytes: est.totalBytes + est.weightsBytes };
}

/**
 * The memory a run of `config` needs on this model (hfRunWork's chunk, hfWorkMemory's estimate), which the preflight
 * weighs. models.inspect (New run's form, src/main/api/handlers/models.ts) calls the same two with the form's context
 * and LoRA, and `llm inspect` the estimate alone (no run, so no copy): one estimate in all three.
 */
export function hfRunMemory(info: Pick<HfFolderInfo, 'config'>, config: RunConfig): ReturnType<typeof estimateLlmMemory> {
  return hfWorkMemory(info.config, hfRunWork(info.config, config), loraOf(config));
}

/**
 * onnxruntime rollouts on the CPU (compute.rolloutEngine=onnxruntime, src/main/compute/llmRollout.ts) hold a float32
 * export of the weights (LoRA merged) in onnxruntime's own memory, outside tfjs and so outside tfjs-wasm's heap, and
 * while an update's re-export loads, the protobuf beside the session: twice the float32 weights. 0 when rollouts run
 * on tfjs (asked for, or on a GPU, where the tfjs engine samples).
 */
export function onnxRolloutBytes(info: Pick<HfFolderInfo, 'config'>, config: RunConfig, backend: string): number {
  if (config.compute.rolloutEngine !== 'onnxruntime' || backend === 'tensorflow-gpu') return 0;
  return 2 * 4 * llmParamCount(info.config);
}

/**
 * Everything checked before a hf run is created: the folder (inspectHfFolder: config.json, the tokenizer, every
 * shard the index names present and as long as its header's tensors need, the tensor names and shapes), a chat
 * template, the context, the memory. Returns what the run's model entry will say but the hashes, and the memory
 * verdict's line. It reads no weight bytes: hashing them here (as it did) made Start wait a full read of a multi-GB
 * checkpoint for hashes nothing used, the training job reading and hashing the files again as it loads them.
 */
export async function preflightHfRun(
  config: RunConfig,
  machine: MachineMemory,
): Promise<{ info: HfFolderInfo; model: HfModelSummary; memory: string }> {
  const path = hfSourceOf(config);
  if (path === null) throw new HfFolderError('model.source is not hf:PATH');
  const info = await inspectHfFolder(resolve(expandHome(path)));
  // Every agent prompt goes through the chat template: without one the run would fail at its first step, a failed
  // run left in the store (the words are the tokenizer's own refusal, src/core/llm/tokenizer.ts).
  if (!info.tokenizer.hasChatTemplate)
    throw new HfFolderError(
      `${info.dir}: tokenizer_config.json has no chat_template (and there is no chat_template.jinja); the agent's prompts go through it: use a chat (instruct) checkpoint or add a template`,
    );
  const max = info.config.maxPositionEmbeddings;
  if (config.model.maxSeqLen > max)
    throw new HfFolderError(
      `model.maxSeqLen ${config.model.maxSeqLen} is longer than ${info.dir}'s context (config.json max_position_embeddings ${max}); set model.maxSeqLen ≤ ${max}`,
    );
  const v = hfRunFit(info, config, hfRunMemory(info, config), machine, loraOf(config) !== null);
  if (!v.trainer.fits) throw new HfFolderError(`${info.config.architecture} from ${info.dir} ${v.trainer.message}`);
  if (v.withRollouts && !v.withRollouts.fits)
    throw new HfFolderError(
      `${info.config.architecture} from ${info.dir} with onnxruntime rollouts (their export holds ${memSize(v.ortBytes)} beside the trainer: twice the float32 weights, counted in the weights) ${v.withRollouts.message}; or sample on tfjs: --set compute.rolloutEngine=tfjs`,
    );
  return { info, model: hfModelSummary(info, config), memory: v.message };
}

/**
 * The memory verdict of a run of `config` whose trainer needs `est`: the trainer's tensors against the training
 * backend (the wasm heap on tfjs-wasm), then, with onnxruntime rollouts on the CPU, the trainer plus the export against
 * the machine's memory. The preflight refuses what either says does not fit; models.inspect shows the same verdict
 * for a run (New run's card), which weighed the trainer alone and so said 'fits' for a run Start then refused.
 */
export function hfRunFit(
  info: Pick<HfFolderInfo, 'config'>,
  config: RunConfig,
  est: ReturnType<typeof estimateLlmMemory>,
  machine: MachineMemory,
  lora: boolean,
): { fits: boolean; message: string; trainer: MemoryFit; withRollouts: MemoryFit | null; ortBytes: number } {
  const trainer = memoryFit(est, machine, { lora });
  const ortBytes = onnxRolloutBytes(info, config, machine.backend);
  if (!trainer.fits || ortBytes === 0) return { fits: trainer.fits, message: trainer.message, trainer, withRollouts: null, ortBytes };
  const withRollouts = memoryFit(
    { ...est, weightsBytes: est.weightsBytes + ortBytes, totalBytes: est.totalBytes + ortBytes },
    { totalBytes: machine.totalBytes, backend: 'onnxruntime' },
    { lora },
  );
  return {
    fits: withRollouts.fits,
    message: `${trainer.message}; with onnxruntime's export of the weights (${memSize(ortBytes)}) ${withRollouts.message}`,
    trainer,
    withRollouts,
    ortBytes,
  };
}

/**
 * preflightHfRun against this machine, before a run of `config` is created: `train --model hf:`
 * (cli/commands/train.ts) and sessions.start (the app and browser mode, api/handlers/sessions.ts) both run it, so a
 * folder one refuses the other refuses too, in the same sentence (sessions.start made a run that failed at its
 * first step instead, left in the store). The machine: its memory (os.totalmem) and the training backend the config
 * forces, or on compute.backend=auto the one `found` says this machine trains on. A refusal is an HfFolderError of
 * one line (the first of a tokenizer library's longer message, as the CLI has always printed it).
 */
export async function preflightHfRunHere(config: RunConfig, found: () => string | Promise<string>): ReturnType<typeof preflightHfRun> {
  const backend = config.compute.backend === 'auto' ? await found() : config.compute.backend;
  try {
    return await preflightHfRun(config, { totalBytes: totalmem(), backend });
  } catch (e) {
    throw e instanceof HfFolderError ? new HfFolderError(e.message.split('\n')[0]) : e;
  }
}
