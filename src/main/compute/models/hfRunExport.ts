/**
 * `arlarena export RUN --format hf`: what a Hugging Face run (model.source = hf:PATH) trained, back in Hugging Face's
 * layouts, from one of its checkpoints and the base model folder the run recorded (checked against the recorded
 * SHA-256s first, as reproduce does — a run's checkpoints hold only what training changed):
 *
 *   OUT/model     the trained model as a float32 checkpoint (LoRA folded in: W + (α/r)·B·A; without LoRA the
 *                 checkpoint's weights), with config.json and the tokenizer files: AutoModelForCausalLM.from_pretrained
 *   OUT/adapter   with LoRA, the adapters in PEFT's layout: PeftModel.from_pretrained(base, OUT/adapter)
 *
 * The writers are hfExport.ts's (cross-checked against Transformers and PEFT in hfExport.integration.test.ts).
 * `openHfRunPolicy` is the same reconstruction as a live policy, for `arlarena eval` of such a run.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RunConfig } from '../../../core/config/types';
import { HfCausalLM, type LlmTensors } from '../../../core/llm/causalLm';
import { LoraAdapters } from '../../../core/llm/lora';
import { LlmPolicy } from '../../../core/llm/policy';
import { readCheckpoint } from '../../../core/training/checkpoint';
import { hfSourceOf, loraOf } from '../../../core/training/hfRun';
import type { TrainerCheckpoint } from '../../../core/training/types';
import type { RunRecord } from '../../../shared/api';
import { loadHfFolder } from './hfFolder';
import { saveLoraAdapter, saveMergedModel } from './hfExport';
import { checkHfFolder, expandHome } from './hfRunModel';

export interface HfRunExport {
  /** The folder written (OUT). */
  readonly path: string;
  /** The checkpoint's step. */
  readonly step: number;
  /** OUT/model. */
  readonly model: string;
  /** OUT/adapter, or null without LoRA. */
  readonly adapter: string | null;
  /** The base model folder used (its files hash as the run recorded them). */
  readonly base: string;
}

/** A checkpoint of a Hugging Face run as a live policy: the base folder (hash-checked) with the trained tensors on it. */
export interface HfRunPolicy {
  readonly policy: LlmPolicy;
  /** The base folder used and its config.json as read. */
  readonly base: string;
  readonly rawConfig: Record<string, unknown>;
  dispose(): void;
}

/**
 * Rebuild the policy `ck` holds: the run's base model folder (`modelFolder`, default the recorded path), refused
 * when its files do not hash as the run recorded them, with the checkpoint's adapters (LoRA) or weights on it.
 */
export async function openHfRunPolicy(
  record: RunRecord,
  ck: TrainerCheckpoint,
  opts: { readonly modelFolder?: string } = {},
): Promise<HfRunPolicy> {
  const config = record.config as unknown as RunConfig;
  // A lab run's config may be any stored shape: the record's model entry decides first.
  if (!record.model || hfSourceOf(config) === null)
    throw new Error(
      `run ${record.id} trained the lab's own model, not a Hugging Face checkpoint; this reads runs of train --model hf:PATH`,
    );
  const recorded = record.model;
  const folder = opts.modelFolder ?? expandHome(recorded.path);
  if (opts.modelFolder === undefined && !existsSync(folder))
    throw new Error(
      `run ${record.id} trained ${recorded.architecture} from ${recorded.path}, which is not on this machine; its checkpoints hold only what training changed — give the base model's folder with --model-folder PATH`,
    );
  const { info } = await checkHfFolder(folder, recorded);
  const trained = readCheckpoint(ck).policy;
  const host: LlmTensors = Object.fromEntries(Object.entries(trained).map(([k, v]) => [k, v.data]));
  const lora = loraOf(config);
  const base = await loadHfFolder(info.dir);
  const model = HfCausalLM.fromTensors(base.config, lora ? base.tensors : host, { name: 'checkpoint', trainable: false });
  let adapters: LoraAdapters | null = null;
  try {
    if (lora) adapters = LoraAdapters.fromTensors(model, lora, host);
  } catch (e) {
    model.dispose();
    throw e;
  }
  return {
    policy: new LlmPolicy(model, base.tokenizer, adapters),
    base: info.dir,
    rawConfig: base.rawConfig,
    dispose() {
      adapters?.dispose();
      model.dispose();
    },
  };
}

/** Write `ck` (a checkpoint of `record`) as OUT/model (+ OUT/adapter with LoRA). Needs a tfjs backend set up. */
export async function exportHfRun(
  record: RunRecord,
  ck: TrainerCheckpoint,
  opts: { readonly out: string; readonly modelFolder?: string },
): Promise<HfRunExport> {
  const out = resolve(opts.out);
  const run = await openHfRunPolicy(record, ck, opts);
  const { model, lora } = run.policy;
  try {
    if (lora) saveLoraAdapter(join(out, 'adapter'), lora, run.base);
    saveMergedModel(join(out, 'model'), run.base, run.rawConfig, model, lora);
  } finally {
    run.dispose();
  }
  return { path: out, step: ck.step, model: join(out, 'model'), adapter: lora ? join(out, 'adapter') : null, base: run.base };
}
