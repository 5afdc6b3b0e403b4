/**
 * The tiny Hugging Face checkpoints the LLM tests run against, made by Hugging Face's own code
 * (tests/peers/make_hf_checkpoints.py in the `llm` peer venv: Transformers 4.44.2 on Debian's PyTorch 1.13).
 * Built once per version of the script into the OS temp folder (≈ 10 s on 2 cores), shared by the test files that
 * need them; a half-written folder is never used (it is built beside and renamed into place).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { venvPython } from './peers';

const SCRIPT = resolve(import.meta.dirname, '..', 'peers', 'make_hf_checkpoints.py');

export const HF_TEST_MODELS = ['qwen2-fp32', 'llama-bf16-sharded', 'qwen3-fp16'] as const;

/** The folder holding tokenizers/, tokenizer_reference.json and one folder per HF_TEST_MODELS entry. */
export function hfTestCheckpoints(): string {
  const python = venvPython('llm');
  const hash = createHash('sha256').update(readFileSync(SCRIPT)).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), `arlarena-hf-checkpoints-${hash}`);
  if (existsSync(join(dir, 'DONE'))) return dir;
  const work = mkdtempSync(join(tmpdir(), 'arlarena-hf-build-'));
  try {
    execFileSync(python, [SCRIPT, work], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
      env: { ...process.env, TORCH_THREADS: '1', TOKENIZERS_PARALLELISM: 'false' },
    });
    writeFileSync(join(work, 'DONE'), '');
    try {
      renameSync(work, dir);
    } catch (e) {
      // Another test file finished first: use its copy.
      if (!existsSync(join(dir, 'DONE'))) throw e;
      rmSync(work, { recursive: true, force: true });
    }
  } catch (e) {
    rmSync(work, { recursive: true, force: true });
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(
      `making the Hugging Face test checkpoints failed: ${err.stderr?.toString().split('\n').filter(Boolean).slice(-3).join(' | ') ?? err.message}`,
    );
  }
  return dir;
}
