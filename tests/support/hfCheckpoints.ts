/**
 * The tiny Hugging Face checkpoints the LLM tests run against, made by Hugging Face's own code
 * (tests/peers/make_hf_checkpoints.py in the `llm` peer venv: Transformers 4.44.2 on Debian's PyTorch 1.13).
 * Built once per version of the script into the OS temp folder (≈ 10 s on 2 cores), shared by the test files that
 * need them; a half-written folder is never used (builtOnce.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { builtOnce } from './builtOnce';
import { venvPython } from './peers';

const SCRIPT = resolve(import.meta.dirname, '..', 'peers', 'make_hf_checkpoints.py');

export const HF_TEST_MODELS = ['qwen2-fp32', 'llama-bf16-sharded', 'qwen3-fp16'] as const;

/** The folder holding tokenizers/, tokenizer_reference.json and one folder per HF_TEST_MODELS entry. */
export function hfTestCheckpoints(): string {
  const python = venvPython('llm');
  const hash = createHash('sha256').update(readFileSync(SCRIPT)).digest('hex').slice(0, 12);
  return builtOnce('hf-checkpoints', hash, 'the Hugging Face test checkpoints', (work) =>
    execFileSync(python, [SCRIPT, work], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
      env: { ...process.env, TORCH_THREADS: '1', TOKENIZERS_PARALLELISM: 'false' },
    }),
  );
}
