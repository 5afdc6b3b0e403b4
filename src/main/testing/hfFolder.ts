/**
 * Hugging Face model folders for tests, written by the lab's own writers: config.json, a byte-level BPE
 * tokenizer.json written by hand as the tokenizers library lays it out, tokenizer_config.json with a chat template,
 * and the weights (initLlmTensors, seed 1, scale 0.1) through the lab's safetensors writer, in one file or two shards
 * with their index. Folders written by Transformers itself are tests/support/hfCheckpoints.ts's.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initLlmTensors } from '../../core/llm/causalLm';
import { llmWeightSpecs, parseLlmConfig, type LlmConfig } from '../../core/llm/config';
import { writeSafetensors } from '../../core/llm/safetensors';
import { Rng } from '../../core/util/rng';

/** A Qwen2 small enough to read by eye: 1 layer, hidden 16, 2 query heads sharing 1 key/value head, 12 tokens. */
export const TINY_QWEN2_CONFIG = {
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

/** ids 0..9: "<eos>", a–h and "ab" (the merge "a b"). */
export const TINY_VOCAB: Readonly<Record<string, number>> = {
  '<eos>': 0,
  ...Object.fromEntries([...'abcdefgh'].map((c, i) => [c, i + 1])),
  ab: 9,
};

/** `{role}:{content}<eos>` per message. */
export const ROLE_CONTENT_TEMPLATE = "{% for m in messages %}{{ m['role'] }}:{{ m['content'] }}<eos>{% endfor %}";

/**
 * A byte-level BPE tokenizer.json: `<eos>` (id 0) is the special added token, and so is `<extra>` at `extraId` when
 * given (a tokenizer with ids past a config's vocab_size).
 */
export function byteLevelTokenizerJson(
  opts: { vocab?: Readonly<Record<string, number>>; merges?: readonly string[]; extraId?: number } = {},
): unknown {
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special(0, '<eos>'), ...(opts.extraId === undefined ? [] : [special(opts.extraId, '<extra>')])],
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
      vocab: { ...(opts.vocab ?? TINY_VOCAB) },
      merges: [...(opts.merges ?? ['a b'])],
    },
  };
}

export interface HfFolderOptions {
  /** config.json (default TINY_QWEN2_CONFIG). */
  config?: object;
  /** The config the weights are made for (default `config`): another one gives weights that do not match config.json. */
  weightsConfig?: object;
  /** tokenizer.json (default byteLevelTokenizerJson()). */
  tokenizer?: unknown;
  /** The chat template of tokenizer_config.json, whose eos_token is `<eos>` (default ROLE_CONTENT_TEMPLATE). */
  chatTemplate?: string;
  /** Two shards with model.safetensors.index.json instead of model.safetensors. */
  shards?: boolean;
}

/** Writes a model folder into `dir` (which exists); returns the weights' config and tensors as written. */
export function writeHfFolder(
  dir: string,
  opts: HfFolderOptions = {},
): { config: LlmConfig; weights: Array<{ name: string; shape: number[]; data: Float32Array }> } {
  const configJson = opts.config ?? TINY_QWEN2_CONFIG;
  writeFileSync(join(dir, 'config.json'), JSON.stringify(configJson));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(opts.tokenizer ?? byteLevelTokenizerJson()));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ eos_token: '<eos>', chat_template: opts.chatTemplate ?? ROLE_CONTENT_TEMPLATE }),
  );
  const config = parseLlmConfig(opts.weightsConfig ?? configJson);
  const t = initLlmTensors(config, new Rng(1), 0.1);
  const weights = llmWeightSpecs(config).map((s) => ({ name: s.name, shape: s.shape, data: t[s.name] }));
  if (opts.shards) {
    const half = Math.ceil(weights.length / 2);
    const files = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    writeFileSync(join(dir, files[0]), writeSafetensors(weights.slice(0, half)));
    writeFileSync(join(dir, files[1]), writeSafetensors(weights.slice(half)));
    const weight_map = Object.fromEntries(weights.map((x, i) => [x.name, files[i < half ? 0 : 1]]));
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map }));
  } else writeFileSync(join(dir, 'model.safetensors'), writeSafetensors(weights));
  return { config, weights };
}
