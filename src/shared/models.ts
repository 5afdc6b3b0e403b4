/**
 * The contract of models.inspect and models.folders: a local Hugging Face model folder (Qwen2 / Qwen3 / Llama) as
 * New run shows it before a run — its architecture, parameter count, the LoRA trainable count, and the training
 * memory estimate (src/core/llm/memory.ts) against what this machine's training backend can hold
 * (src/core/llm/memoryFit.ts). The main side reads only the folder's config.json, tokenizer files and safetensors
 * headers, never the weights.
 */
import { z } from 'zod';
import { LORA_TARGET_MODULES } from './loraTargets';

export { LORA_TARGET_MODULES };

/** LoRA settings as the CLI's `--lora r=16,alpha=32,dropout=0.05,targets=q_proj+v_proj` gives them. */
export const LoraRequest = z
  .object({
    /** Adapter rank r. */
    rank: z.number().int().min(1).max(4096),
    /** The update is scaled by alpha / rank. */
    alpha: z.number().positive().max(1e6),
    /** Dropout on the adapter input while training, in [0, 1) (default 0.05). */
    dropout: z.number().min(0).lt(1).optional(),
    /** Which projections get adapters (default: all seven). */
    targetModules: z.array(z.enum(LORA_TARGET_MODULES)).min(1).max(LORA_TARGET_MODULES.length).optional(),
  })
  .strict();
export type LoraRequest = z.infer<typeof LoraRequest>;

/** A run-config override as sessions.start takes it (the same shape as api.ts's ConfigOverrides). */
const Override = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const ModelsInspectInput = z
  .object({
    /** The folder holding config.json, on the machine the lab runs on (browser mode: inside a `--allow-dir` folder). */
    path: z.string().min(1).max(4096).optional(),
    /**
     * The desktop app: the grant its folder dialog answered (imports.pick with purpose 'model'), instead of `path`
     * (the same opaque id as api.ts's PathGrant; repeated here because api.ts imports this file).
     */
    grant: z
      .string()
      .regex(/^[A-Za-z0-9_-]{16,64}$/, 'a grant is the opaque id imports.pick answered')
      .optional(),
    /** Train LoRA adapters with these settings; absent or null = full fine-tuning. */
    lora: LoraRequest.nullable().optional(),
    /**
     * The run the estimate is for (the preset and env New run would start, with its overrides): its mini-batch and
     * activation budget give the rows per chunk, its response budget the response tokens, and a full fine-tuning run
     * with a KL term counts the frozen π_ref copy — as the run's own check before it starts does.
     */
    run: z
      .object({
        preset: z.string().min(1).max(100),
        env: z.string().min(1).max(100),
        overrides: z.record(z.string().min(1), Override).optional(),
      })
      .strict()
      .optional(),
    /** Rows differentiated together (one chunk of a mini-batch); default: the run's, else 1. */
    rows: z.number().int().min(1).max(65_536).optional(),
    /** Tokens per row, prompt + response; default min(2048, the model's max_position_embeddings), as `train --model hf:` sets. */
    seqLen: z.number().int().min(2).max(1_048_576).optional(),
    /** Response tokens per row (only those go through the vocabulary projection); default the run's, else min(256, seqLen − 1). */
    responseTokens: z.number().int().min(1).max(1_048_576).optional(),
  })
  .strict();

export const ModelInspection = z.object({
  /** The folder, absolute. */
  dir: z.string(),
  architecture: z.string(),
  layers: z.number().int(),
  hiddenSize: z.number().int(),
  heads: z.number().int(),
  kvHeads: z.number().int(),
  headDim: z.number().int(),
  intermediateSize: z.number().int(),
  vocabSize: z.number().int(),
  maxPositions: z.number().int(),
  /** Tensor dtypes of the weight files (F32, BF16, F16); everything is computed in float32. */
  dtypes: z.array(z.string()),
  weightFiles: z.number().int(),
  chatTemplate: z.boolean(),
  params: z.number().int(),
  /** Parameters the run trains: the adapters' with LoRA, every weight without. */
  trainableParams: z.number().int(),
  /** The LoRA settings the estimate used, defaults filled in; null = full fine-tuning. */
  lora: z.object({ rank: z.number().int(), alpha: z.number(), dropout: z.number(), targetModules: z.array(z.string()) }).nullable(),
  /** The work shape estimated; `refCopy`: the weights are counted twice (a full fine-tuning run with a KL term keeps a frozen π_ref). */
  work: z.object({ rows: z.number().int(), seqLen: z.number().int(), responseTokens: z.number().int(), refCopy: z.boolean() }),
  memory: z.object({
    weightsBytes: z.number(),
    trainingStateBytes: z.number(),
    activationBytes: z.number(),
    totalBytes: z.number(),
  }),
  machine: z.object({
    totalBytes: z.number(),
    freeBytes: z.number(),
    /** The tfjs backend a run would train on here. */
    backend: z.string(),
    /** What a run may plan on: 80 % of the machine's memory, or of tfjs-wasm's 4 GiB heap when smaller. */
    budgetBytes: z.number(),
    limitedBy: z.enum(['machine', 'wasm-heap']),
  }),
  fits: z.boolean(),
  /** One line: fits / does not fit, the estimate's parts against the budget, and what to change. */
  verdict: z.string(),
});
export type ModelInspection = z.infer<typeof ModelInspection>;

/**
 * Model folders New run can offer. Browser mode: the folders holding a config.json inside the `--allow-dir` roots
 * (searched a few levels deep); Electron: none listed (`anyPath` true — the native folder dialog picks any folder).
 */
export const ModelFolders = z.object({
  anyPath: z.boolean(),
  roots: z.array(z.string()),
  folders: z.array(z.object({ path: z.string(), architecture: z.string().nullable() })),
  /** True when the search stopped at its limit (more folders may be there). */
  truncated: z.boolean(),
});
export type ModelFolders = z.infer<typeof ModelFolders>;
