/**
 * Loading a model folder, and refusing bad ones before any tensor is read, with the reason. The folders here are
 * written by the lab's own safetensors writer and a hand-written byte-level BPE tokenizer.json (the integration test
 * hfCrossCheck.integration.test.ts loads folders written by Transformers itself).
 */
import { mkdtempSync, rmSync, truncateSync, unlinkSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLlmConfig } from '../../../core/llm/config';
import { initLlmTensors } from '../../../core/llm/causalLm';
import { llmWeightSpecs } from '../../../core/llm/config';
import { writeSafetensors } from '../../../core/llm/safetensors';
import { Rng } from '../../../core/util/rng';
import { inspectHfFolder, loadHfFolder } from './hfFolder';

const configJson = {
  architectures: ['Qwen2ForCausalLM'],
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  max_position_embeddings: 32,
  vocab_size: 12,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  eos_token_id: 0,
};

/** A minimal byte-level BPE tokenizer.json: ids 0..9 for "<eos>", a–h and "ab". */
function tokenizerJson(extraId?: number): unknown {
  const vocab: Record<string, number> = { '<eos>': 0 };
  'abcdefgh'.split('').forEach((c, i) => (vocab[c] = i + 1));
  vocab.ab = 9;
  const added = [{ id: 0, content: '<eos>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }];
  if (extraId !== undefined)
    added.push({ id: extraId, content: '<extra>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: ['a b'],
    },
  };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(opts: { config?: unknown; tokenizer?: unknown; shards?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'arlarena-hf-folder-'));
  dirs.push(dir);
  const cfgJson = opts.config ?? configJson;
  writeFileSync(join(dir, 'config.json'), JSON.stringify(cfgJson));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(opts.tokenizer ?? tokenizerJson()));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ eos_token: '<eos>', chat_template: "{% for m in messages %}{{ m['role'] }}:{{ m['content'] }}<eos>{% endfor %}" }),
  );
  const cfg = parseLlmConfig(configJson);
  const t = initLlmTensors(cfg, new Rng(1), 0.1);
  const list = llmWeightSpecs(cfg).map((s) => ({ name: s.name, shape: s.shape, data: t[s.name] }));
  if (opts.shards) {
    const half = Math.ceil(list.length / 2);
    const files = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    writeFileSync(join(dir, files[0]), writeSafetensors(list.slice(0, half)));
    writeFileSync(join(dir, files[1]), writeSafetensors(list.slice(half)));
    const weight_map = Object.fromEntries(list.map((x, i) => [x.name, files[i < half ? 0 : 1]]));
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map }));
  } else writeFileSync(join(dir, 'model.safetensors'), writeSafetensors(list));
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
