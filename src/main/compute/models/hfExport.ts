/**
 * Writing what the lab trains back in Hugging Face's layouts, so that Transformers and PEFT load it as their own:
 *   saveLoraAdapter   adapter_model.safetensors + adapter_config.json (PeftModel.from_pretrained(base, dir))
 *   saveMergedModel   model.safetensors (float32, adapters folded in) + config.json + the tokenizer files
 *                     (AutoModelForCausalLM.from_pretrained(dir))
 * Files are written to a temporary name and renamed, so an interrupted export leaves no half file.
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HfCausalLM } from '../../../core/llm/causalLm';
import { llmWeightSpecs } from '../../../core/llm/config';
import type { LoraAdapters } from '../../../core/llm/lora';
import { writeSafetensors } from '../../../core/llm/safetensors';

function writeAtomic(path: string, data: Uint8Array | string): void {
  const tmp = `${path}.partial`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

export function saveLoraAdapter(dir: string, lora: LoraAdapters, baseModel = ''): void {
  mkdirSync(dir, { recursive: true });
  const { tensors, adapterConfig } = lora.toPeft(baseModel);
  writeAtomic(join(dir, 'adapter_model.safetensors'), writeSafetensors(tensors, { format: 'pt' }));
  writeAtomic(join(dir, 'adapter_config.json'), `${JSON.stringify(adapterConfig, null, 2)}\n`);
}

const TOKENIZER_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'chat_template.jinja',
  'generation_config.json',
];

/** The model with `lora` merged in (or as is without it), as a float32 checkpoint next to a copy of the source's config and tokenizer. */
export function saveMergedModel(
  dir: string,
  sourceFolder: string,
  rawConfig: Record<string, unknown>,
  model: HfCausalLM,
  lora: LoraAdapters | null,
): void {
  mkdirSync(dir, { recursive: true });
  const tensors = lora ? lora.mergedTensors(model) : model.getTensors();
  const list = llmWeightSpecs(model.config).map((s) => ({ name: s.name, shape: s.shape, data: tensors[s.name] }));
  writeAtomic(join(dir, 'model.safetensors'), writeSafetensors(list, { format: 'pt' }));
  writeAtomic(join(dir, 'config.json'), `${JSON.stringify({ ...rawConfig, torch_dtype: 'float32' }, null, 2)}\n`);
  for (const f of TOKENIZER_FILES) if (existsSync(join(sourceFolder, f))) copyFileSync(join(sourceFolder, f), join(dir, f));
}
