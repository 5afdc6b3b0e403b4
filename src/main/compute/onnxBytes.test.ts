/**
 * The lab's three ONNX exports — the policy's full-sequence graph (core/agent/onnxExport.ts), its generation graph
 * (ortDecoder.ts) and a Hugging Face causal LM's (core/llm/onnx, inline and with external data) — write the same
 * bytes as before they shared one graph builder (core/util/onnxGraph.ts): the digests below were taken from the three
 * exporters' own copies of the builder. The weights are a fixed ramp, not seeded normals, so the bytes depend on no
 * Math.log / Math.cos rounding. A digest that changes means an export's bytes changed: if that is intended (a new op,
 * another initializer), check the graph on onnxruntime and the Transformers references, then take the new digest.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { exportOnnx, initWeights, resolveModelConfig } from '../../core/agent';
import { initLlmTensors } from '../../core/llm/causalLm';
import { parseLlmConfig } from '../../core/llm/config';
import { exportLlmOnnx, exportLlmOnnxExternal } from '../../core/llm/onnx';
import { Rng } from '../../core/util/rng';
import { exportDecoderOnnx } from './ortDecoder';

/** Every tensor set to a ramp over [-0.5, 0.5) by element index (distinct values, exact in float32). */
function ramp(tensors: Record<string, Float32Array>): void {
  for (const a of Object.values(tensors)) for (let i = 0; i < a.length; i++) a[i] = (i % 97) / 97 - 0.5;
}

function sha256(parts: Uint8Array | Uint8Array[]): string {
  const h = createHash('sha256');
  for (const p of Array.isArray(parts) ? parts : [parts]) h.update(p);
  return h.digest('hex');
}

describe('ONNX export bytes', () => {
  it("the policy's full-sequence and generation graphs", () => {
    const w = initWeights(
      resolveModelConfig({ size: 'custom', dModel: 16, nLayers: 2, nHeads: 4, dFF: 32, maxSeqLen: 24 }, 20),
      new Rng(1),
    );
    ramp(w.tensors);
    expect(sha256(exportOnnx(w))).toBe('32176a337bac5207a81086aeb28305f75a3c0dc7c131d10866a6f3c54a0d1543');
    expect(sha256(exportDecoderOnnx(w))).toBe('d583ad476fb8374df9734d8263a494618b874a4d0371dbb70fd5b6dafdfdbf14');
  });

  it("a Hugging Face causal LM's graph, inline and with external data", () => {
    const cfg = parseLlmConfig({
      architectures: ['Qwen3ForCausalLM'],
      vocab_size: 30,
      hidden_size: 16,
      intermediate_size: 24,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      max_position_embeddings: 64,
      tie_word_embeddings: true,
    });
    const t = initLlmTensors(cfg, new Rng(1));
    ramp(t);
    expect(sha256(exportLlmOnnx(cfg, t))).toBe('684ee4f98af45c1d894139f3fa2b134ed81f0750051cf848ca9bdaceff45feb7');
    // Initializers of 1 KiB or more (minBytes' default) go to the data file, the smaller ones stay in the model.
    const ext = exportLlmOnnxExternal(cfg, t, 'model.onnx.data');
    expect(sha256(ext.model)).toBe('b7db5c4c90c25d5e89cf268e05b49f5bcd07ee4344351fc5a18e08ff50c6169f');
    expect(sha256(ext.data)).toBe('7e0a35216841a239a5731b48c3741e8aa42f9d3054b8be0edcf32ebfefe17023');
  });
});
