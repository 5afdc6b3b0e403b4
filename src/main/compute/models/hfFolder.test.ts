/**
 * Loading a model folder, and refusing bad ones before any tensor is read, with the reason. The folders here
 * (src/main/testing/hfFolder.ts) are written by the lab's own safetensors writer and a hand-written byte-level BPE tokenizer.json (the integration test
 * hfCrossCheck.integration.test.ts loads folders written by Transformers itself).
 */
import { mkdtempSync, rmSync, truncateSync, unlinkSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { byteLevelTokenizerJson, TINY_QWEN2_CONFIG, writeHfFolder } from '../../testing/hfFolder';
import { inspectHfFolder, loadHfFolder } from './hfFolder';

const configJson = TINY_QWEN2_CONFIG;
const tokenizerJson = (extraId?: number): unknown => byteLevelTokenizerJson({ extraId });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A model folder (see src/main/testing/hfFolder.ts); its weights always follow configJson, whatever `config` says. */
function folder(opts: { config?: object; tokenizer?: unknown; shards?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'arlarena-hf-folder-'));
  dirs.push(dir);
  writeHfFolder(dir, { ...opts, weightsConfig: configJson });
  return dir;
}

describe('loadHfFolder', () => {
  it('loads a single-file and a sharded folder to the same tensors, with file and tokenizer hashes', async () => {
    const a = await loadHfFolder(folder());
    const b = await loadHfFolder(folder({ shards: true }));
    expect(Object.keys(a.tensors).sort()).toEqual(Object.keys(b.tensors).sort());
    for (const k of Object.keys(a.tensors)) expect(b.tensors[k]).toEqual(a.tensors[k]);
    expect(Object.keys(a.weightHashes)).toEqual(['model.safetensors']);
    expect(Object.keys(b.weightHashes)).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    expect(a.weightHashes['model.safetensors']).toMatch(/^[0-9a-f]{64}$/);
    expect(a.tokenizerHashes['tokenizer.json']).toMatch(/^[0-9a-f]{64}$/);
    expect(a.tokenizer.encode('abc')).toEqual([9, 3]);
    expect(a.tokenizer.applyChatTemplate([{ role: 'user', content: 'ab' }])).toEqual(a.tokenizer.encode('user:ab<eos>'));
  });

  it('refuses a missing folder and a folder without config.json', async () => {
    await expect(inspectHfFolder('/nonexistent/model')).rejects.toThrow(/model folder \/nonexistent\/model does not exist/);
    const d = folder();
    unlinkSync(join(d, 'config.json'));
    await expect(inspectHfFolder(d)).rejects.toThrow(/has no config.json — not a Hugging Face model folder/);
  });

  it('refuses an unsupported architecture', async () => {
    await expect(inspectHfFolder(folder({ config: { ...configJson, architectures: ['GPT2LMHeadModel'] } }))).rejects.toThrow(
      /architecture "GPT2LMHeadModel" is not supported/,
    );
  });

  it('refuses a truncated safetensors file, naming the tensor that is cut', async () => {
    const d = folder();
    const f = join(d, 'model.safetensors');
    truncateSync(f, statSync(f).size - 10);
    await expect(inspectHfFolder(d)).rejects.toThrow(
      /model.safetensors is truncated: \d+ bytes, but tensor "model.norm.weight" ends at byte/,
    );
  });

  it('refuses a tokenizer with ids beyond vocab_size', async () => {
    await expect(inspectHfFolder(folder({ tokenizer: tokenizerJson(20) }))).rejects.toThrow(
      /tokenizer.json has token ids up to 20 but config.json vocab_size is 12/,
    );
  });

  it('refuses weights that do not match config.json and a missing shard', async () => {
    await expect(inspectHfFolder(folder({ config: { ...configJson, intermediate_size: 32 } }))).rejects.toThrow(
      /tensor "model.layers.0.mlp.gate_proj.weight" has shape \[24, 16\] but config.json implies \[32, 16\]/,
    );
    await expect(inspectHfFolder(folder({ config: { ...configJson, num_hidden_layers: 2 } }))).rejects.toThrow(
      /tensor\(s\) missing for Qwen2ForCausalLM \(model.layers.1/,
    );
    const d = folder({ shards: true });
    unlinkSync(join(d, 'model-00002-of-00002.safetensors'));
    await expect(inspectHfFolder(d)).rejects.toThrow(/names model-00002-of-00002.safetensors, which is not in the folder/);
  });
});
