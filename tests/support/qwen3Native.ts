/**
 * A tiny Qwen3 checkpoint written by Transformers' own Qwen3ForCausalLM.save_pretrained (4.51.3, the `llm-qwen3`
 * peer venv; tests/peers/make_qwen3_native.py), with the ChatML test tokenizer that tests/support/hfCheckpoints.ts
 * makes, saved beside it by Transformers. Built once per version of the script into the OS temp folder (≈ 6 s),
 * beside and renamed into place so a half-written folder is never used (builtOnce.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { builtOnce } from './builtOnce';
import { hfTestCheckpoints } from './hfCheckpoints';
import { venvPython } from './peers';

const SCRIPT = resolve(import.meta.dirname, '..', 'peers', 'make_qwen3_native.py');

/** The model folder (config.json, model.safetensors in bfloat16, tokenizer.json, tokenizer_config.json). */
export function qwen3NativeCheckpoint(): string {
  const python = venvPython('llm-qwen3');
  const tokenizer = join(hfTestCheckpoints(), 'tokenizers', 'chatml');
  const hash = createHash('sha256')
    .update(readFileSync(SCRIPT))
    .update(readFileSync(join(tokenizer, 'tokenizer.json')))
    .digest('hex')
    .slice(0, 12);
  return builtOnce('qwen3-native', hash, 'the Transformers Qwen3 test checkpoint', (work) =>
    execFileSync(python, [SCRIPT, tokenizer, work], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
      env: { ...process.env, TOKENIZERS_PARALLELISM: 'false' },
    }),
  );
}
