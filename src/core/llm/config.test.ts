import { describe, expect, it } from 'vitest';
import { llmParamCount, llmWeightSpecs, parseLlmConfig } from './config';

/** Qwen2.5-0.5B-Instruct's config.json fields (published on its model card / Hub page). */
const qwen25 = {
  architectures: ['Qwen2ForCausalLM'],
  hidden_act: 'silu',
  hidden_size: 896,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  tie_word_embeddings: true,
  vocab_size: 151936,
  use_sliding_window: false,
  bos_token_id: 151643,
  eos_token_id: 151645,
};
/** Qwen3-0.6B's: head_dim 128 with hidden 1024 and 16 heads (head_dim · heads ≠ hidden). */
const qwen3 = {
  architectures: ['Qwen3ForCausalLM'],
  attention_bias: false,
  head_dim: 128,
  hidden_act: 'silu',
  hidden_size: 1024,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  tie_word_embeddings: true,
  vocab_size: 151936,
  use_sliding_window: false,
  eos_token_id: 151645,
};

describe('parseLlmConfig', () => {
  it('reads Qwen2.5-0.5B: head_dim from hidden/heads, q/k/v biases, tied head, 494,032,768 parameters', () => {
    const c = parseLlmConfig(qwen25);
    expect(c).toMatchObject({
      architecture: 'Qwen2ForCausalLM',
      headDim: 64,
      numKvHeads: 2,
      qkvBias: true,
      oBias: false,
      qkNorm: false,
      tieWordEmbeddings: true,
      rope: { type: 'default' },
      eosTokenIds: [151645],
    });
    expect(llmParamCount(c)).toBe(494_032_768);
    expect(llmWeightSpecs(c).some((s) => s.name === 'lm_head.weight')).toBe(false);
  });

  it('reads Qwen3-0.6B: explicit head_dim, q/k norms, no biases', () => {
    const c = parseLlmConfig(qwen3);
    expect(c).toMatchObject({ headDim: 128, qkNorm: true, qkvBias: false, oBias: false });
    const names = llmWeightSpecs(c).map((s) => s.name);
    expect(names).toContain('model.layers.27.self_attn.q_norm.weight');
    expect(llmWeightSpecs(c).find((s) => s.name === 'model.layers.0.self_attn.q_proj.weight')!.shape).toEqual([2048, 1024]);
  });

  it('reads Llama rope_scaling llama3 and yarn with defaults', () => {
    const llama = {
      ...qwen25,
      architectures: ['LlamaForCausalLM'],
      tie_word_embeddings: false,
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    };
    expect(parseLlmConfig(llama)).toMatchObject({
      qkvBias: false,
      tieWordEmbeddings: false,
      rope: { type: 'llama3', factor: 8, originalMaxPositionEmbeddings: 8192 },
    });
    // Qwen's long-context setting: scale = max / original = 131072 / 32768 = 4 (Transformers ≥ 4.51's reading).
    const yarn = parseLlmConfig({
      ...qwen3,
      max_position_embeddings: 131072,
      rope_scaling: { type: 'yarn', factor: 4, original_max_position_embeddings: 32768 },
    });
    expect(yarn.rope).toEqual({
      type: 'yarn',
      factor: 4,
      originalMaxPositionEmbeddings: 32768,
      betaFast: 32,
      betaSlow: 1,
      attentionFactor: 0.1 * Math.log(4) + 1,
    });
    // Without original_max_position_embeddings: `factor` over max_position_embeddings.
    const plain = parseLlmConfig({ ...qwen3, rope_scaling: { rope_type: 'yarn', factor: 2 } });
    expect(plain.rope).toMatchObject({ factor: 2, originalMaxPositionEmbeddings: 40960 });
    // original = max: scale 1, no attention scaling, whatever `factor` says.
    expect(
      parseLlmConfig({ ...qwen3, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 40960 } }).rope,
    ).toMatchObject({ factor: 1, attentionFactor: 1 });
  });

  it('refuses what it cannot run, naming the field and the fix', () => {
    expect(() => parseLlmConfig({ ...qwen25, architectures: ['MistralForCausalLM'] })).toThrow(
      /architecture "MistralForCausalLM" is not supported; supported: Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM/,
    );
    expect(() => parseLlmConfig({ ...qwen25, hidden_size: undefined })).toThrow(/hidden_size is missing; expected a positive integer/);
    expect(() => parseLlmConfig({ ...qwen25, num_key_value_heads: 4 })).toThrow(
      /num_key_value_heads = 4 is invalid; must divide num_attention_heads \(14\)/,
    );
    expect(() => parseLlmConfig({ ...qwen25, rope_scaling: { rope_type: 'dynamic', factor: 2 } })).toThrow(
      /rope_scaling.rope_type = "dynamic" is invalid; supported: default, linear, llama3, yarn/,
    );
    expect(() => parseLlmConfig({ ...qwen25, use_sliding_window: true })).toThrow(/sliding-window attention is not implemented/);
    expect(() => parseLlmConfig({ ...qwen25, hidden_act: 'gelu' })).toThrow(/hidden_act = "gelu" is invalid; only "silu"/);
    expect(() => parseLlmConfig([])).toThrow(/expected a JSON object/);
  });
});

describe('estimateLlmMemory', () => {
  it('counts float32 weights, AdamW state (full) or adapter state (LoRA), and activations', async () => {
    const { estimateLlmMemory } = await import('./memory');
    const { parseLoraSpec, loraParamCount } = await import('./lora');
    const c = parseLlmConfig(qwen25);
    const full = estimateLlmMemory(c, { rows: 4, seqLen: 512, responseTokens: 128 }, null);
    expect(full.weightsBytes).toBe(4 * 494_032_768);
    expect(full.trainingStateBytes).toBe(12 * 494_032_768);
    const lora = parseLoraSpec('r=16,alpha=32');
    const l = estimateLlmMemory(c, { rows: 4, seqLen: 512, responseTokens: 128 }, lora);
    // r·(in+out) summed over q,k,v,o,gate,up,down of 24 layers: 366,592 per layer at r = 16.
    expect(loraParamCount(c, lora)).toBe(8_798_208);
    expect(l.trainingStateBytes).toBe(16 * 8_798_208);
    expect(l.activationBytes).toBe(full.activationBytes);
    expect(l.totalBytes).toBeLessThan(full.totalBytes);
  });
});
