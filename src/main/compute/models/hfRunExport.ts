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
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RunConfig } from '../../../core/config/types';
import { HfCausalLM, type LlmTensors } from '../../../core/llm/causalLm';
import { LoraAdapters } from '../../../core/llm/lora';
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

/** Write `ck` (a checkpoint of `record`) as OUT/model (+ OUT/adapter with LoRA). Needs a tfjs backend set up. */
export async function exportHfRun(
  record: RunRecord,
  ck: TrainerCheckpoint,
  opts: { readonly out: string; readonly modelFolder?: string },
): Promise<HfRunExport> {
  const config = record.config as unknown as RunConfig;
  // A lab run's config may be any stored shape: the record's model entry decides first.
  if (!record.model || hfSourceOf(config) === null)
    throw new Error(
      `run ${record.id} trained the lab's own model, not a Hugging Face checkpoint; --format hf exports runs of train --model hf:PATH (the lab model's checkpoints travel in a bundle)`,
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
  const out = resolve(opts.out);
  const model = HfCausalLM.fromTensors(base.config, lora ? base.tensors : host, { name: 'export', trainable: false });
  let adapters: LoraAdapters | null = null;
  try {
    if (lora) {
      adapters = LoraAdapters.fromTensors(model, lora, host);
      saveLoraAdapter(join(out, 'adapter'), adapters, info.dir);
    }
    saveMergedModel(join(out, 'model'), info.dir, base.rawConfig, model, adapters);
  } finally {
    adapters?.dispose();
    model.dispose();
  }
  return { path: out, step: ck.step, model: join(out, 'model'), adapter: lora ? join(out, 'adapter') : null, base: info.dir };
}
