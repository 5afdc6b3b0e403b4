/**
 * A tiny Qwen3 checkpoint written by Transformers' own Qwen3ForCausalLM.save_pretrained (4.51.3, the `llm-qwen3`
 * peer venv; tests/peers/make_qwen3_native.py), with the ChatML test tokenizer that tests/support/hfCheckpoints.ts
 * makes, saved beside it by Transformers. Built once per version of the script into the OS temp folder (≈ 6 s),
 * beside and renamed into place so a half-written folder is never used.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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
  const dir = join(tmpdir(), `arlarena-qwen3-native-${hash}`);
  if (existsSync(join(dir, 'DONE'))) return dir;
  const work = mkdtempSync(join(tmpdir(), 'arlarena-qwen3-build-'));
  try {
    execFileSync(python, [SCRIPT, tokenizer, work], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 300_000,
      env: { ...process.env, TOKENIZERS_PARALLELISM: 'false' },
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
      `making the Transformers Qwen3 test checkpoint failed: ${err.stderr?.toString().split('\n').filter(Boolean).slice(-3).join(' | ') ?? err.message}`,
    );
  }
  return dir;
}
