/**
 * The ONNX export of the HF causal LMs (src/core/llm/onnx) on onnxruntime-node against the tfjs model it was exported
 * from, on tiny random models of the three architectures (each with its own features: Qwen2's q/k/v biases and tied
 * head, Qwen3's q/k norms with head_dim ≠ hidden/heads and yarn rope, Llama's untied head, attention and MLP biases,
 * llama3 rope; grouped-query attention in all): logits of a left-padded batch, response log-probs, greedy and
 * seeded top-k/top-p sampling through the KV cache, LoRA merged into the export, and the fp16 / int8 rewrites.
 * The Transformers cross-check on real checkpoints is hfOnnx.integration.test.ts under compute/models.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mismatchStats } from '../../core/agent/mismatch';
import { HfCausalLM } from '../../core/llm/causalLm';
import { parseLlmConfig, type LlmConfig } from '../../core/llm/config';
import { generateLlm, type LlmSamplingOptions } from '../../core/llm/generate';
import { LoraAdapters, parseLoraSpec } from '../../core/llm/lora';
import { llmOnnxTensors } from '../../core/llm/onnx';
import { Rng } from '../../core/util/rng';
import { initBackend } from './backends';
import { OrtLlm } from './ortLlmEngine';

const BASE = {
  vocab_size: 56,
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  max_position_embeddings: 96,
  rms_norm_eps: 1e-6,
};
const CONFIGS: Record<string, LlmConfig> = {
  qwen2: parseLlmConfig({
    ...BASE,
    architectures: ['Qwen2ForCausalLM'],
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rope_theta: 1e6,
    tie_word_embeddings: true,
  }),
  qwen3: parseLlmConfig({
    ...BASE,
    architectures: ['Qwen3ForCausalLM'],
    num_attention_heads: 4,
    num_key_value_heads: 1,
    head_dim: 12,
    rope_theta: 10000,
    tie_word_embeddings: true,
    rope_scaling: { rope_type: 'yarn', factor: 2, original_max_position_embeddings: 48 },
  }),
  llama: parseLlmConfig({
    ...BASE,
    architectures: ['LlamaForCausalLM'],
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rope_theta: 500000,
    tie_word_embeddings: false,
    attention_bias: true,
    mlp_bias: true,
    rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 32 },
  }),
};

/** Random weights with biases and norm weights moved off their init, so that every exported tensor matters. */
function randomModel(cfg: LlmConfig, seed: number): HfCausalLM {
  const rng = new Rng(seed);
  const model = HfCausalLM.random(cfg, rng, 0.25);
  for (const [name, v] of Object.entries(model.vars)) {
    if (name.endsWith('norm.weight') || name.endsWith('.bias'))
      v.assign(
        tf.add(
          v,
          tf.tensor(
            Float32Array.from({ length: v.size }, () => 0.1 * rng.normal()),
            v.shape,
          ),
        ),
      );
  }
  return model;
}

const PROMPTS = [
  [3, 9, 14, 2, 7, 30, 41, 5],
  [11, 4],
  [6, 6, 19, 23, 52],
];

function leftPad(seqs: number[][], pad: number): { ids: Int32Array; mask: Uint8Array; T: number } {
  const T = Math.max(...seqs.map((s) => s.length));
  const ids = new Int32Array(seqs.length * T).fill(pad);
  const mask = new Uint8Array(seqs.length * T);
  seqs.forEach((s, i) =>
    s.forEach((t, k) => {
      ids[i * T + T - s.length + k] = t;
      mask[i * T + T - s.length + k] = 1;
    }),
  );
  return { ids, mask, T };
}

/** max |a − b| over the real (mask = 1) columns of [N, T, V] logits. */
function maxRealDiff(a: ArrayLike<number>, b: ArrayLike<number>, mask: Uint8Array, V: number): number {
  let m = 0;
  for (let c = 0; c < mask.length; c++) if (mask[c]) for (let v = 0; v < V; v++) m = Math.max(m, Math.abs(a[c * V + v] - b[c * V + v]));
  return m;
}

beforeAll(async () => {
  await initBackend('wasm');
});

for (const [arch, cfg] of Object.entries(CONFIGS)) {
  describe(`${arch} exported to ONNX vs the tfjs model`, () => {
    let model: HfCausalLM;
    let ort: OrtLlm;
    beforeAll(async () => {
      model = randomModel(cfg, 7);
      ort = await OrtLlm.create(cfg, llmOnnxTensors(model, null));
    });
    afterAll(async () => {
      await ort.release();
      model.dispose();
    });

    it('gives the same logits for a left-padded batch (max |Δ| ≤ 1e-4)', async () => {
      const { ids, mask, T } = leftPad(PROMPTS, 0);
      const want = model.forward(ids, PROMPTS.length, T, mask);
      const d = maxRealDiff(await ort.forwardLogits(ids, PROMPTS.length, T, mask), want.dataSync(), mask, cfg.vocabSize);
      want.dispose();
      expect(d).toBeLessThanOrEqual(1e-4);
    });

    it('gives the same response log-probs, at temperature 1 and 0.7', async () => {
      const rows = [
        { promptIds: PROMPTS[0], responseIds: [4, 8, 15, 16, 23, 42] },
        { promptIds: PROMPTS[1], responseIds: [1] },
        { promptIds: PROMPTS[2], responseIds: [9, 9, 9] },
      ];
      for (const temperature of [1, 0.7]) {
        const o = model.tokenLogProbs(rows, { temperature });
        const want = (o.logProbs.arraySync() as number[][]).map((r, i) => r.slice(0, rows[i].responseIds.length));
        tf.dispose([o.logProbs, o.entropy, o.mask]);
        const got = await ort.responseLogProbs(rows, temperature);
        expect(got.map((r) => r.length)).toEqual([6, 1, 3]);
        expect(mismatchStats(got, want).max).toBeLessThanOrEqual(1e-4);
      }
    });

    it('decodes greedily through the KV cache to the same tokens, with the same behaviour log-probs', async () => {
      const opts: LlmSamplingOptions = { maxNewTokens: 24, temperature: 0, topP: 1, topK: 0, stopIds: [] };
      const want = await generateLlm(model, PROMPTS, opts, new Rng(3), 0);
      const got = await ort.generate(PROMPTS, opts, new Rng(3), 0);
      expect(got.tokens).toEqual(want.tokens);
      expect(got.finish).toEqual(want.finish);
      expect(mismatchStats(got.logProbs, want.logProbs).max).toBeLessThanOrEqual(1e-4);
      // The tokens are not a degenerate repetition (a broken cache would still be deterministic).
      expect(new Set(want.tokens.flat()).size).toBeGreaterThan(4);
    });

    it('samples the same tokens from the same seed (temperature, top-k, top-p, stop id and stop string)', async () => {
      const base: LlmSamplingOptions = { maxNewTokens: 20, temperature: 1, topP: 0.9, topK: 12, stopIds: [] };
      const free = await generateLlm(model, PROMPTS, base, new Rng(11), 0);
      const stopId = free.tokens[0][5];
      const decode = (ids: number[]): string => ids.map((t) => `<${t}>`).join('');
      const stopString = `<${free.tokens[1][3]}>`;
      for (const opts of [base, { ...base, stopIds: [stopId], stopStrings: [stopString], decode }]) {
        const want = await generateLlm(model, PROMPTS, opts, new Rng(11), 0);
        const got = await ort.generate(PROMPTS, opts, new Rng(11), 0);
        expect(got.tokens).toEqual(want.tokens);
        expect(got.finish).toEqual(want.finish);
        expect(mismatchStats(got.logProbs, want.logProbs).max).toBeLessThanOrEqual(1e-4);
      }
      const stopped = await ort.generate(PROMPTS, { ...base, stopIds: [stopId], stopStrings: [stopString], decode }, new Rng(11), 0);
      expect(stopped.finish).toContain('stop');
    });
  });
}

describe('ONNX export: LoRA and rollout precisions', () => {
  const cfg = CONFIGS.qwen3;
  let model: HfCausalLM;
  beforeAll(() => {
    model = randomModel(cfg, 9);
  });
  afterAll(() => model.dispose());

  it('exports the adapted model: LoRA merged gives the adapted logits, not the base ones', async () => {
    const lora = LoraAdapters.create(model, parseLoraSpec('r=4,alpha=8,dropout=0,targets=q_proj+v_proj+o_proj+down_proj'), new Rng(2));
    const init = new Rng(3);
    for (const v of lora.trainableVariables())
      if (v.name.endsWith('lora_B.weight'))
        v.assign(
          tf.tensor(
            Float32Array.from({ length: v.size }, () => 0.2 * init.normal()),
            v.shape,
          ),
        );
    const { ids, mask, T } = leftPad(PROMPTS, 0);
    const base = await OrtLlm.create(cfg, llmOnnxTensors(model, null));
    lora.attach(model);
    try {
      const merged = await OrtLlm.create(cfg, llmOnnxTensors(model, lora));
      const want = model.forward(ids, PROMPTS.length, T, mask);
      const wantData = want.dataSync();
      want.dispose();
      const dMerged = maxRealDiff(await merged.forwardLogits(ids, PROMPTS.length, T, mask), wantData, mask, cfg.vocabSize);
      const dBase = maxRealDiff(await base.forwardLogits(ids, PROMPTS.length, T, mask), wantData, mask, cfg.vocabSize);
      await merged.release();
      expect(dMerged).toBeLessThanOrEqual(1e-4);
      expect(dBase).toBeGreaterThan(1e-2);
    } finally {
      await base.release();
      lora.dispose();
    }
  });

  it('fp16 and int8 sample and score with a measurable, bounded gap to the float32 trainer', async () => {
    const opts: LlmSamplingOptions = { maxNewTokens: 16, temperature: 1, topP: 1, topK: 0, stopIds: [] };
    const gaps: Record<string, number> = {};
    for (const precision of ['fp16', 'int8'] as const) {
      const ort = await OrtLlm.create(cfg, llmOnnxTensors(model, null), { precision });
      try {
        const gen = await ort.generate(PROMPTS, opts, new Rng(5), 0);
        expect(gen.tokens.map((t) => t.length)).toEqual([16, 16, 16]);
        const rows = PROMPTS.map((p, i) => ({ promptIds: p, responseIds: gen.tokens[i] }));
        const o = model.tokenLogProbs(rows);
        const trainer = o.logProbs.arraySync() as number[][];
        tf.dispose([o.logProbs, o.entropy, o.mask]);
        gaps[precision] = mismatchStats(gen.logProbs, trainer).max;
        // Scoring the same rows in one full-sequence call: the same precision's numerics, so a gap of the same order
        // (not equal: int8 quantises activations per call, with a scale from that call's own min/max).
        gaps[`${precision} scoring`] = mismatchStats(await ort.responseLogProbs(rows), trainer).max;
      } finally {
        await ort.release();
      }
    }
    // fp16 rounds weights, activations and the cache to 11 significant bits; int8 quantises every weight matmul.
    console.log(`rollout precision gaps to the float32 trainer (max |Δ log-prob|): ${JSON.stringify(gaps)}`);
    for (const p of ['fp16', 'fp16 scoring']) {
      expect(gaps[p]).toBeGreaterThan(1e-5);
      expect(gaps[p]).toBeLessThan(0.1);
    }
    for (const p of ['int8', 'int8 scoring']) {
      expect(gaps[p]).toBeGreaterThan(gaps.fp16);
      expect(gaps[p]).toBeLessThan(1);
    }
  });

  it('loads the weights as ONNX external data (the path of models past 2 GiB) with the same logits and tokens', async () => {
    const { ids, mask, T } = leftPad(PROMPTS, 0);
    const inline = await OrtLlm.create(cfg, llmOnnxTensors(model, null));
    const external = await OrtLlm.create(cfg, llmOnnxTensors(model, null), { externalData: true });
    try {
      const a = await inline.forwardLogits(ids, PROMPTS.length, T, mask);
      const b = await external.forwardLogits(ids, PROMPTS.length, T, mask);
      expect(maxRealDiff(a, b, mask, cfg.vocabSize)).toBe(0);
      const opts: LlmSamplingOptions = { maxNewTokens: 12, temperature: 1, topP: 0.9, topK: 10, stopIds: [] };
      expect((await external.generate(PROMPTS, opts, new Rng(4), 0)).tokens).toEqual(
        (await inline.generate(PROMPTS, opts, new Rng(4), 0)).tokens,
      );
    } finally {
      await Promise.all([inline.release(), external.release()]);
    }
    await expect(OrtLlm.create(cfg, llmOnnxTensors(model, null), { externalData: true, precision: 'int8' })).rejects.toThrow(
      /compute.rolloutPrecision "int8" rewrites the export in memory, which one ONNX protobuf limits to 2 GiB/,
    );
  });

  it('refuses an unknown precision and token ids outside the vocabulary', async () => {
    await expect(OrtLlm.create(cfg, llmOnnxTensors(model, null), { precision: 'bf16' as never })).rejects.toThrow(
      /compute.rolloutPrecision: must be one of fp32, fp16, int8, got "bf16"/,
    );
    const ort = await OrtLlm.create(cfg, llmOnnxTensors(model, null));
    try {
      await expect(ort.forwardLogits(Int32Array.from([1, 56]), 1, 2)).rejects.toThrow(/token id 56 outside \[0, 56\)/);
    } finally {
      await ort.release();
    }
  });
});
