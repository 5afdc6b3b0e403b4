/**
 * Which engine samples an HF model's rollouts (llmRollout.ts): onnxruntime on the CPU by default (re-exported from
 * the policy by setWeights), the tfjs KV-cache engine when asked for or on a GPU, precision settings refused where they would change nothing, and the fallback to
 * tfjs (with its reason) when onnxruntime cannot hold the export. The policy here is a stand-in with only what the
 * choice reads (the real engines' numerics are checked in ortLlmEngine.test.ts and hfOnnx.integration.test.ts).
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RolloutEngine } from '../../core/agent/engine';
import { HfCausalLM } from '../../core/llm/causalLm';
import { parseLlmConfig } from '../../core/llm/config';
import type { LlmPolicy } from '../../core/llm/policy';
import { Rng } from '../../core/util/rng';
import { initBackend } from './backends';
import { createLlmRolloutEngine } from './llmRollout';
import type { OrtLlmRolloutEngine } from './ortLlmEngine';

const TFJS_ENGINE = { name: 'tfjs-llm-kvcache (stand-in)' } as unknown as RolloutEngine;

function standIn(model: Pick<HfCausalLM, 'config' | 'getTensors'>): LlmPolicy {
  return {
    model,
    lora: null,
    tokenizer: { specialTokens: { pad: null }, tokenId: () => undefined, decode: () => '' },
    stopIds: () => [1],
    engine: () => TFJS_ENGINE,
  } as unknown as LlmPolicy;
}

const tinyCfg = parseLlmConfig({
  architectures: ['Qwen2ForCausalLM'],
  vocab_size: 40,
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  max_position_embeddings: 64,
  tie_word_embeddings: true,
});

// Qwen2.5-1.5B's shapes: 1.5 G float32 parameters, past what one ONNX protobuf holds. Never materialised: the engine
// checks the size from the config before it reads a tensor.
const hugeCfg = parseLlmConfig({
  architectures: ['Qwen2ForCausalLM'],
  vocab_size: 151936,
  hidden_size: 1536,
  intermediate_size: 8960,
  num_hidden_layers: 28,
  num_attention_heads: 12,
  num_key_value_heads: 2,
  max_position_embeddings: 32768,
  tie_word_embeddings: true,
});

describe('createLlmRolloutEngine', () => {
  let model: HfCausalLM;
  beforeAll(async () => {
    await initBackend('wasm');
    model = HfCausalLM.random(tinyCfg, new Rng(1));
  });
  afterAll(() => model.dispose());

  it('samples on onnxruntime by default on the CPU, at the precision asked for', async () => {
    for (const [precision, name] of [
      [undefined, 'onnxruntime-cpu-llm-kvcache'],
      ['int8', 'onnxruntime-cpu-int8-llm-kvcache'],
    ] as const) {
      const c = await createLlmRolloutEngine(standIn(model), { precision });
      try {
        expect(c.engine.name).toBe(name);
        expect(c.fallback).toBeUndefined();
      } finally {
        await c.engine.dispose?.();
      }
    }
  });

  it('uses the tfjs KV-cache engine when asked for, and on a GPU', async () => {
    expect(await createLlmRolloutEngine(standIn(model), { engine: 'tfjs' })).toEqual({ engine: TFJS_ENGINE });
    expect(await createLlmRolloutEngine(standIn(model), { gpu: true })).toEqual({ engine: TFJS_ENGINE });
  });

  it("setWeights() re-exports the onnxruntime engine from the policy's current weights (called after each update)", async () => {
    const c = await createLlmRolloutEngine(standIn(model));
    const ort = c.engine as OrtLlmRolloutEngine;
    const ids = Int32Array.from([3, 1, 4, 1, 5]);
    const tfjsLogits = (): Float32Array => {
      const t = model.forward(ids, 1, ids.length);
      const d = t.dataSync() as Float32Array;
      t.dispose();
      return d;
    };
    const maxDiff = (a: Float32Array, b: Float32Array): number => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
    const embed = model.vars['model.embed_tokens.weight'];
    const before = embed.clone();
    try {
      expect(maxDiff(await ort.forwardLogits(ids, 1, ids.length), tfjsLogits())).toBeLessThanOrEqual(1e-5);
      embed.assign(tf.mul(embed, 3));
      // Still the old weights until re-exported: an update the engine has not seen.
      expect(maxDiff(await ort.forwardLogits(ids, 1, ids.length), tfjsLogits())).toBeGreaterThan(1e-3);
      await ort.setWeights();
      expect(maxDiff(await ort.forwardLogits(ids, 1, ids.length), tfjsLogits())).toBeLessThanOrEqual(1e-5);
    } finally {
      embed.assign(before);
      before.dispose();
      await c.engine.dispose?.();
    }
  });

  it('refuses an unknown engine, and a precision the chosen engine would ignore', async () => {
    await expect(createLlmRolloutEngine(standIn(model), { engine: 'vllm' as never })).rejects.toThrow(
      /compute.rolloutEngine: unknown engine "vllm"; known: onnxruntime, tfjs/,
    );
    await expect(createLlmRolloutEngine(standIn(model), { engine: 'tfjs', precision: 'fp16' })).rejects.toThrow(
      /compute.rolloutPrecision "fp16" is a setting of the onnxruntime engine, which compute.rolloutEngine "tfjs" turns off/,
    );
    await expect(createLlmRolloutEngine(standIn(model), { gpu: true, precision: 'int8' })).rejects.toThrow(
      /which a GPU run does not use; set compute.rolloutPrecision=fp32/,
    );
  });

  it('falls back to tfjs with the reason when the export cannot be made, unless a precision needs onnxruntime', async () => {
    // A policy whose weights do not match its config: the export refuses it, the tfjs engine takes over.
    const broken = standIn({ config: tinyCfg, getTensors: () => ({}) });
    const c = await createLlmRolloutEngine(broken);
    expect(c.engine).toBe(TFJS_ENGINE);
    expect(c.fallback, c.fallback).toMatch(
      /^rollouts on tfjs: compute.rolloutEngine "onnxruntime": the Qwen2ForCausalLM export could not be loaded \(weights: \d+ tensor\(s\) missing for Qwen2ForCausalLM/,
    );
    // Past 2 GiB of float32 weights the export goes to external data, which the fp16 / int8 rewrites cannot take:
    // refused before any tensor is read, and no fallback (it would change the numerics).
    const huge = standIn({ config: hugeCfg, getTensors: () => ({}) });
    await expect(createLlmRolloutEngine(huge, { precision: 'fp16' })).rejects.toThrow(
      /compute.rolloutPrecision "fp16" needs the onnxruntime engine, which failed: .*float32 weights take 5\.\d\d GiB: use compute.rolloutPrecision=fp32/,
    );
  });
});
