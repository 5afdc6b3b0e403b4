/**
 * A pretrained Hugging Face model as the trainer's policy (model.source = hf:PATH): what runTraining holds instead
 * of the lab's PolicyModel + word tokenizer when the config names a model folder.
 *
 *   the policy     LlmTrainerPolicy over the checkpoint: LoRA adapters on the frozen base (model.lora.rank ≥ 1,
 *                  A seeded from (seed, 'lora-init'), B zero so step 0 is the base model), or every weight trained
 *   the prompts    LlmPromptCodec: the env's turn text as the user turn of the model's chat template
 *   the sampler    compute.rolloutEngine=tfjs (or no engine factory injected): LlmRolloutEngine, KV-cache sampling
 *                  from the policy's own variables (nothing to copy per step); onnxruntime: the injected
 *                  LlmRolloutEngineFactory's engine (src/main/compute/llmRollout.ts: the ONNX export with a KV cache,
 *                  or the tfjs engine on a GPU or as its fallback), re-exported from the policy after every update
 *   π_ref          the base checkpoint: under LoRA the same model with the adapters bypassed; without LoRA a
 *                  frozen second copy (only when a KL term needs it)
 *   identity       the SHA-256 of every weight file and tokenizer file, as the loader (src/main) computed them:
 *                  written into every checkpoint, and a resume from a folder whose hashes differ is refused
 *
 * Files are read in src/main (compute/models/hfFolder.ts) and injected as an `HfModelLoader`: the core reads none.
 * Checkpoints hold only what training changes (the adapters, or the full weights without LoRA) under stable names.
 */
import { Rng, hashSeed } from '../util/rng';
import type { RunConfig } from '../config/types';
import type { ModelWeights } from '../agent/model';
import type { RolloutEngine } from '../agent/engine';
import type { TrainerPolicy } from '../agent/policy';
import { HfCausalLM, type LlmTensors } from '../llm/causalLm';
import type { LlmConfig } from '../llm/config';
import { LoraAdapters, validateLora, type LoraSettings, type LoraTarget } from '../llm/lora';
import { LlmPolicy } from '../llm/policy';
import type { HfTokenizer } from '../llm/tokenizer';
import { baseReference, LlmPromptCodec, LlmTrainerPolicy } from '../llm/trainerPolicy';
import type { NamedTensors } from './tensorio';

/** A model folder as src/main read it: parsed config, float32 tensors, tokenizer and the files' SHA-256. */
export interface HfModelFiles {
  /** The folder read (for messages). */
  readonly dir: string;
  readonly config: LlmConfig;
  readonly tensors: LlmTensors;
  readonly tokenizer: HfTokenizer;
  /** SHA-256 (hex) of each weight file, by file name. */
  readonly weightHashes: Readonly<Record<string, string>>;
  /** SHA-256 (hex) of tokenizer.json, tokenizer_config.json (and chat_template.jinja), by file name. */
  readonly tokenizerHashes: Readonly<Record<string, string>>;
}

/** Reads the folder of `model.source = hf:PATH` (given PATH). Injected through TrainerDeps. */
export type HfModelLoader = (path: string) => Promise<HfModelFiles>;

/**
 * Makes the rollout engine of a `compute.rolloutEngine = onnxruntime` hf run from its policy (src/main builds it:
 * compute/llmRollout.ts). `fallback`: the engine asked for could not run and the tfjs one took over, with the reason.
 */
export type LlmRolloutEngineFactory = (policy: LlmPolicy) => Promise<{ readonly engine: RolloutEngine; readonly fallback?: string }>;

/**
 * The RolloutEngine contract's setWeights takes the lab model's weights; an LLM engine reads its policy's current
 * variables instead (LlmRolloutEngine, OrtLlmRolloutEngine) and ignores the argument.
 */
const FROM_POLICY = null as unknown as ModelWeights;

/** What identifies a base model: its architecture and the SHA-256 of its files. */
export interface HfIdentity {
  readonly architecture: string;
  readonly weights: Readonly<Record<string, string>>;
  readonly tokenizer: Readonly<Record<string, string>>;
}

/** PATH of `model.source = hf:PATH`, or null for the lab's own model. */
export function hfSourceOf(config: RunConfig): string | null {
  const s = config.model.source ?? 'lab';
  return s.startsWith('hf:') && s.length > 3 ? s.slice(3) : null;
}

/** The run's LoRA settings, or null (rank 0 or absent: full fine-tuning). */
export function loraOf(config: RunConfig): LoraSettings | null {
  const l = config.model.lora;
  if (!l || l.rank === 0) return null;
  return validateLora({
    rank: l.rank,
    alpha: l.alpha,
    dropout: l.dropout,
    targetModules: l.targets.split('+').map((t) => t.trim()) as LoraTarget[],
  });
}

/** The first file whose recorded and found hashes differ, as `FILE: recorded …, found …`; null when all match. */
export function hashMismatch(recorded: HfIdentity, found: HfIdentity): string | null {
  if (recorded.architecture !== found.architecture) return `config.json: recorded ${recorded.architecture}, found ${found.architecture}`;
  for (const kind of ['weights', 'tokenizer'] as const) {
    const a = recorded[kind];
    const b = found[kind];
    for (const f of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (a[f] === b[f]) continue;
      const was = a[f] ? `recorded sha256 ${a[f]}` : 'not part of the recorded model';
      const now = b[f] ? `found ${b[f]}` : 'missing from the folder';
      return `${f}: ${was}, ${now}`;
    }
  }
  return null;
}

function hostTensors(t: NamedTensors): LlmTensors {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.data]));
}

export class HfRun {
  private constructor(
    readonly policy: LlmTrainerPolicy,
    readonly codec: LlmPromptCodec,
    readonly engine: RolloutEngine,
    /** Forward passes of π_ref (null when no KL term needs it). */
    readonly reference: Pick<TrainerPolicy, 'config' | 'tokenLogProbs'> | null,
    readonly identity: HfIdentity,
    /** LoRA dropout (0 without LoRA): the update's forward passes draw masks from the run's stream. */
    readonly dropout: number,
    private readonly refModel: HfCausalLM | null,
    /** Why the engine asked for did not run (the tfjs engine samples instead); null when it did. */
    readonly engineFallback: string | null,
  ) {}

  /**
   * After the policy's weights changed (an update, or the undo of an abandoned one): an engine holding a copy (the
   * ONNX export) re-reads them; the tfjs engine shares the variables, for which this is a no-op.
   */
  async syncEngine(): Promise<void> {
    await this.engine.setWeights(FROM_POLICY);
  }

  /** Where π_ref came from, for the checkpoint state: the architecture and the first weight file's hash. */
  get refSource(): string {
    const first = Object.keys(this.identity.weights).sort()[0];
    return `hf:${this.identity.architecture}@${first ? this.identity.weights[first].slice(0, 12) : 'unknown'}`;
  }

  /**
   * Load the folder, check it against a resumed checkpoint's identity, and build the policy: fresh (LoRA A from the
   * seed) or from the checkpoint's trained tensors.
   */
  static async open(
    config: RunConfig,
    load: HfModelLoader | undefined,
    needRef: boolean,
    resume: { readonly policy: NamedTensors; readonly identity: HfIdentity | undefined } | null,
    makeEngine?: LlmRolloutEngineFactory,
  ): Promise<HfRun> {
    const path = hfSourceOf(config);
    if (path === null) throw new Error('HfRun: the config has no model.source=hf:PATH');
    if (!load)
      throw new Error(
        `model.source=hf:${path}: this trainer was started without a model-folder loader (src/main/compute/models builds one)`,
      );
    const files = await load(path);
    const identity: HfIdentity = {
      architecture: files.config.architecture,
      weights: { ...files.weightHashes },
      tokenizer: { ...files.tokenizerHashes },
    };
    if (resume) {
      if (!resume.identity) throw new Error('resume: the checkpoint records no Hugging Face model (it is a lab-model checkpoint)');
      const diff = hashMismatch(resume.identity, identity);
      if (diff)
        throw new Error(`resume: ${files.dir} is not the base model this run trained from (${diff}); give the run's own model folder`);
    }
    const maxSeqLen = config.model.maxSeqLen;
    if (maxSeqLen > files.config.maxPositionEmbeddings)
      throw new Error(
        `model.maxSeqLen ${maxSeqLen} is beyond the checkpoint's max_position_embeddings ${files.config.maxPositionEmbeddings}; set model.maxSeqLen ≤ ${files.config.maxPositionEmbeddings}`,
      );
    const lora = loraOf(config);
    const start = lora || !resume ? files.tensors : hostTensors(resume.policy);
    const model = HfCausalLM.fromTensors(files.config, start, { name: 'policy', trainable: lora === null });
    let adapters: LoraAdapters | null = null;
    let refModel: HfCausalLM | null = null;
    try {
      if (lora)
        adapters = resume
          ? LoraAdapters.fromTensors(model, lora, hostTensors(resume.policy))
          : LoraAdapters.create(model, lora, new Rng(hashSeed(config.seed, 'lora-init')));
      const llm = new LlmPolicy(model, files.tokenizer, adapters);
      const policy = new LlmTrainerPolicy(llm, maxSeqLen);
      let reference: HfRun['reference'] = null;
      if (needRef && adapters) reference = baseReference(llm, policy.config);
      else if (needRef) {
        refModel = HfCausalLM.fromTensors(files.config, files.tensors, { name: 'ref', trainable: false });
        const ref = refModel;
        reference = { config: policy.config, tokenLogProbs: (rows, opts) => ref.tokenLogProbs(rows, opts) };
      }
      // As the lab model's path: onnxruntime when asked for and a factory is there, else the trainer's own tfjs.
      const choice =
        config.compute.rolloutEngine === 'onnxruntime' && makeEngine
          ? await makeEngine(llm)
          : { engine: llm.engine(), fallback: undefined };
      return new HfRun(
        policy,
        new LlmPromptCodec(llm),
        choice.engine,
        reference,
        identity,
        lora?.dropout ?? 0,
        refModel,
        choice.fallback ?? null,
      );
    } catch (e) {
      adapters?.dispose();
      refModel?.dispose();
      model.dispose();
      throw e;
    }
  }

  /** The trained tensors under stable names (the checkpoint's policy.bin). */
  namedWeights(): NamedTensors {
    const shapes = this.policy.shapes();
    const w = this.policy.getWeights().tensors;
    return Object.fromEntries(Object.keys(shapes).map((k) => [k, { shape: shapes[k], data: w[k] }]));
  }

  /** AdamW state keyed by tfjs variable names (`m/<name>`) → by stable names, for a checkpoint. */
  optimToStable(t: NamedTensors): NamedTensors {
    return renameMoments(t, this.policy.stableNames());
  }

  /** The inverse of optimToStable, for AdamW.setState on resume. */
  optimFromStable(t: NamedTensors): NamedTensors {
    return renameMoments(t, new Map([...this.policy.stableNames()].map(([a, b]) => [b, a])));
  }

  dispose(): void {
    this.policy.dispose();
    this.refModel?.dispose();
  }
}

function renameMoments(t: NamedTensors, names: ReadonlyMap<string, string>): NamedTensors {
  const out: NamedTensors = {};
  for (const [k, v] of Object.entries(t)) {
    const slash = k.indexOf('/');
    const kind = k.slice(0, slash);
    const name = k.slice(slash + 1);
    const to = names.get(name);
    if (to === undefined) throw new Error(`optimizer state: no trainable variable "${name}" (a checkpoint of another LoRA setting?)`);
    out[`${kind}/${to}`] = v;
  }
  return out;
}
