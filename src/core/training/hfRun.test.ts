import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index';
import { hashMismatch, hfSourceOf, loraOf, type HfIdentity } from './hfRun';

const H = (c: string) => c.repeat(64);
const base: HfIdentity = {
  architecture: 'Qwen3ForCausalLM',
  weights: { 'model-00001-of-00002.safetensors': H('a'), 'model-00002-of-00002.safetensors': H('b') },
  tokenizer: { 'tokenizer.json': H('c'), 'tokenizer_config.json': H('d') },
};

describe('a Hugging Face run: source, LoRA settings and the base model identity', () => {
  it('reads hf:PATH and the LoRA fields from the config (rank 0 = full fine-tuning)', () => {
    const lab = resolveConfig('sampo', 'sokoban').config!;
    expect(hfSourceOf(lab)).toBeNull();
    expect(loraOf(lab)).toBeNull();
    const hf = resolveConfig('sampo', 'sokoban', {
      'model.source': 'hf:/m/q',
      'compute.rolloutEngine': 'tfjs',
      'compute.refLogProbEngine': 'trainer',
      'warmStart.source': 'none',
      'model.lora.rank': 8,
      'model.lora.targets': 'q_proj+v_proj',
    }).config!;
    expect(hfSourceOf(hf)).toBe('/m/q');
    expect(loraOf(hf)).toEqual({ rank: 8, alpha: 32, dropout: 0.05, targetModules: ['q_proj', 'v_proj'] });
  });

  it('names the first file whose hash differs, or the one that is missing', () => {
    expect(hashMismatch(base, { ...base, weights: { ...base.weights }, tokenizer: { ...base.tokenizer } })).toBeNull();
    expect(hashMismatch(base, { ...base, weights: { ...base.weights, 'model-00002-of-00002.safetensors': H('e') } })).toBe(
      `model-00002-of-00002.safetensors: recorded sha256 ${H('b')}, found ${H('e')}`,
    );
    expect(hashMismatch(base, { ...base, tokenizer: { 'tokenizer.json': H('c') } })).toBe(
      `tokenizer_config.json: recorded sha256 ${H('d')}, missing from the folder`,
    );
    expect(hashMismatch(base, { ...base, weights: { ...base.weights, 'extra.safetensors': H('f') } })).toBe(
      `extra.safetensors: not part of the recorded model, found ${H('f')}`,
    );
    expect(hashMismatch(base, { ...base, architecture: 'LlamaForCausalLM' })).toBe(
      'config.json: recorded Qwen3ForCausalLM, found LlamaForCausalLM',
    );
  });
});
