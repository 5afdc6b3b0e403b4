/**
 * models.* — a local Hugging Face model folder as New run shows it before a run: models.inspect reads config.json,
 * the tokenizer files and the safetensors headers (never the weights: compute/models/hfFolder.ts), counts the
 * parameters and the LoRA adapters', and weighs the training memory estimate (core/llm/memory.ts) against what this
 * machine's training backend can hold (core/llm/memoryFit.ts); models.folders lists the model folders a page may
 * name. Paths follow imports.path's rule (pathAccess.ts): in browser mode only inside `serve --allow-dir` folders.
 */
import { readdir, readFile } from 'node:fs/promises';
import { freemem, totalmem } from 'node:os';
import { join } from 'node:path';
import { err, ok } from '../../../shared/result';
import type { ModelFolders } from '../../../shared/models';
import { DEFAULT_LORA, LORA_TARGETS, validateLora, type LoraSettings, type LoraTarget } from '../../../core/llm/lora';
import { resolveConfig } from '../../../core/config/index';
import type { RunConfig } from '../../../core/config/types';
import { memoryFit } from '../../../core/llm/memoryFit';
import type { LabServices } from '../../app/lab';
import { HfFolderError, inspectHfFolder } from '../../compute/models/hfFolder';
import { hfRunFit, hfRunWork, hfWorkMemory } from '../../compute/models/hfRunModel';
import type { AreaMethods, Handlers } from '../types';
import { namedPath } from './namedFile';
import { mainSidePath, pathRefusal } from './pathAccess';

const MODELS_HINT =
  'pick a folder inside one of them, or restart with "arlarena serve --allow-dir FOLDER" naming the folder that holds your models';

/** How deep models.folders looks under each allowed root, and how much it reads at most. */
const FOLDER_DEPTH = 3;
const MAX_FOLDERS = 100;
const MAX_VISITS = 2000;

/** The first line of an error (HfFolderError messages are one line; a tokenizer library's may not be). */
const oneLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0];

export interface ModelsHandlerOptions {
  /** The machine's memory (default os.totalmem / os.freemem); tests pass a fixed one. */
  readonly memory?: () => { totalBytes: number; freeBytes: number };
}

export function createModelsHandlers(services: LabServices, options: ModelsHandlerOptions = {}): Handlers<AreaMethods<'models'>> {
  const memory = options.memory ?? (() => ({ totalBytes: totalmem(), freeBytes: freemem() }));
  return {
    'models.inspect': async (input, ctx) => {
      // By path (browser mode: inside `--allow-dir`) or, in the desktop app, by the grant its folder dialog answered.
      const named = await namedPath(input, ctx, async (path) => {
        const abs = mainSidePath(path);
        if (abs === null)
          return err('VALIDATION', `path "${path}" is not absolute; give the model folder's full path on the machine the lab runs on`, {
            field: 'path',
          });
        return (await pathRefusal(abs, ctx, 'model folders', MODELS_HINT)) ?? ok(abs);
      });
      if (!named.ok) return named;
      const p = named.value;

      let lora: LoraSettings | null = null;
      if (input.lora) {
        const targets = (input.lora.targetModules ?? [...LORA_TARGETS]) as LoraTarget[];
        if (new Set(targets).size !== targets.length)
          return err('VALIDATION', `lora.targetModules names a module twice (${targets.join(', ')}); list each once`, {
            field: 'lora.targetModules',
          });
        lora = validateLora({
          rank: input.lora.rank,
          alpha: input.lora.alpha,
          dropout: input.lora.dropout ?? DEFAULT_LORA.dropout,
          targetModules: targets,
        });
      }

      let info: Awaited<ReturnType<typeof inspectHfFolder>>;
      try {
        info = await inspectHfFolder(p);
      } catch (e) {
        if (e instanceof HfFolderError || (e as Error).name === 'LlmConfigError' || (e as Error).name === 'TokenizerFolderError')
          return err('VALIDATION', oneLine(e), {
            field: 'path',
            hint: 'give the folder that holds config.json, the safetensors weights and tokenizer.json',
          });
        throw e;
      }
      const c = info.config;
      // The run the estimate is for: its config as sessions.start would resolve it (the model fields aside).
      let run: RunConfig | null = null;
      if (input.run) {
        const r = resolveConfig(input.run.preset, input.run.env, input.run.overrides ?? {});
        if (!r.config) {
          const first = r.issues[0];
          return err('VALIDATION', `run: ${r.issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, {
            field:
              first?.field === 'preset' ? 'run.preset' : first?.field === 'env.name' ? 'run.env' : `run.overrides.${first?.field ?? ''}`,
          });
        }
        run = r.config;
      }
      const seqLen = input.seqLen ?? Math.min(2048, c.maxPositionEmbeddings);
      if (seqLen > c.maxPositionEmbeddings)
        return err(
          'VALIDATION',
          `seqLen ${seqLen} is longer than the model's context (config.json max_position_embeddings ${c.maxPositionEmbeddings}); use at most ${c.maxPositionEmbeddings}`,
          { field: 'seqLen' },
        );
      // The chunk the run's trainer would differentiate (hfRunModel.ts, the preflight's own estimate): its rows per
      // chunk from the mini-batch and activation budget, its response length, π_ref's copy for a KL term.
      const fromRun = run ? hfRunWork(c, run, seqLen) : null;
      const responseTokens = input.responseTokens ?? fromRun?.responseTokens ?? Math.min(256, seqLen - 1);
      if (responseTokens >= seqLen)
        return err(
          'VALIDATION',
          `responseTokens ${responseTokens} leaves no room for the prompt in ${seqLen} tokens; use fewer than seqLen`,
          {
            field: 'responseTokens',
          },
        );
      // The form's LoRA is the run's (its overrides leave the model fields out): with it, π_ref is no copy.
      const work = { rows: input.rows ?? fromRun?.rows ?? 1, seqLen, responseTokens, refCopy: lora === null && fromRun?.refCopy === true };
      const est = hfWorkMemory(c, work, lora);
      // The training backend as preflightHfRunHere takes it: the run's forced one, else the one this machine trains on.
      const backend = run && run.compute.backend !== 'auto' ? run.compute.backend : (await services.computeInfo()).training;
      const mem = memory();
      const fit = memoryFit(est, { totalBytes: mem.totalBytes, backend }, { lora: lora !== null });
      // For a run, the verdict Start's preflight gives (hfRunFit): onnxruntime rollouts' export counted beside the trainer.
      const verdict = run ? hfRunFit(info, run, est, { totalBytes: mem.totalBytes, backend }, lora !== null) : fit;
      return ok({
        dir: info.dir,
        architecture: c.architecture,
        layers: c.numLayers,
        hiddenSize: c.hiddenSize,
        heads: c.numHeads,
        kvHeads: c.numKvHeads,
        headDim: c.headDim,
        intermediateSize: c.intermediateSize,
        vocabSize: c.vocabSize,
        maxPositions: c.maxPositionEmbeddings,
        dtypes: [...new Set([...info.headers.values()].flatMap((h) => h.tensors.map((t) => t.dtype)))].sort(),
        weightFiles: info.weightFiles.length,
        chatTemplate: info.tokenizer.hasChatTemplate,
        params: est.params,
        trainableParams: est.trainableParams,
        lora: lora && { ...lora, targetModules: [...lora.targetModules] },
        work,
        memory: {
          weightsBytes: est.weightsBytes,
          trainingStateBytes: est.trainingStateBytes,
          activationBytes: est.activationBytes,
          totalBytes: est.totalBytes,
        },
        machine: { totalBytes: mem.totalBytes, freeBytes: mem.freeBytes, backend, budgetBytes: fit.budgetBytes, limitedBy: fit.limitedBy },
        fits: verdict.fits,
        verdict: verdict.message,
      });
    },
    'models.folders': async (_input, ctx) => {
      if (ctx.transport !== 'browser') return ok({ anyPath: true, roots: [], folders: [], truncated: false });
      const roots = [...(ctx.importRoots ?? [])];
      const found: ModelFolders['folders'] = [];
      let visits = 0;
      let truncated = false;
      // Breadth-first, real folders only (a link is not followed, so nothing outside a root is read), hidden
      // folders and node_modules skipped.
      const queue: Array<{ dir: string; depth: number }> = roots.map((dir) => ({ dir, depth: 0 }));
      while (queue.length > 0) {
        if (found.length >= MAX_FOLDERS || visits >= MAX_VISITS) {
          truncated = true;
          break;
        }
        const { dir, depth } = queue.shift()!;
        visits++;
        let entries;
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch {
          continue;
        }
        if (entries.some((e) => e.isFile() && e.name === 'config.json')) {
          found.push({ path: dir, architecture: await architectureOf(join(dir, 'config.json')) });
          continue;
        }
        if (depth >= FOLDER_DEPTH) continue;
        for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)))
          if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
            queue.push({ dir: join(dir, e.name), depth: depth + 1 });
      }
      return ok({ anyPath: false, roots, folders: found, truncated });
    },
  };
}

/** config.json's first `architectures` entry, or null when it cannot be read (models.inspect then says why). */
async function architectureOf(path: string): Promise<string | null> {
  try {
    const c = JSON.parse(await readFile(path, 'utf8')) as { architectures?: unknown };
    return Array.isArray(c.architectures) && typeof c.architectures[0] === 'string' ? c.architectures[0] : null;
  } catch {
    return null;
  }
}
