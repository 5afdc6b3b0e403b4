/**
 * The pure parts of the HF ONNX export: the graph's interface and the properties the rollout-precision rewrites rely
 * on (no Cast / Constant nodes; every weight product a MatMul with a 2-D initializer), tied embeddings stored once,
 * and the host-side feeds (rope tables with the signed sine, the cache bias layout). The numerics against tfjs and
 * Transformers are checked on onnxruntime in src/main/compute (ortLlmEngine.test.ts, hfOnnx.integration.test.ts).
 */
import onnxProto from 'onnx-proto';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../util/rng';
import { initLlmTensors } from '../causalLm';
import { parseLlmConfig } from '../config';
import { ropeFrequencies, ropeTables } from '../rope';
import { cacheBias, exportLlmOnnx, exportLlmOnnxExternal, ropeFeeds } from './index';

const cfgOf = (arch: string, tied: boolean) =>
  parseLlmConfig({
    architectures: [arch],
    vocab_size: 30,
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 3,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 64,
    tie_word_embeddings: tied,
  });

function decode(bytes: Uint8Array): onnxProto.onnx.IModelProto {
  return onnxProto.onnx.ModelProto.decode(bytes) as onnxProto.onnx.IModelProto;
}

describe('exportLlmOnnx', () => {
  it('has the documented interface, one output projection per step, and weight MatMuls the int8 rewrite can take', () => {
    const cfg = cfgOf('Qwen3ForCausalLM', true);
    const g = decode(exportLlmOnnx(cfg, initLlmTensors(cfg, new Rng(1)))).graph!;
    const inputs = g.input!.map((i) => i.name);
    expect(inputs.slice(0, 5)).toEqual(['input_ids', 'rope_cos', 'rope_sin', 'attn_bias', 'select']);
    expect(inputs.slice(5)).toEqual([0, 1, 2].flatMap((l) => [`cache_key_t_${l}`, `cache_value_${l}`]));
    expect(g.output!.map((o) => o.name)).toEqual(['logits', ...[0, 1, 2].flatMap((l) => [`new_key_t_${l}`, `new_value_${l}`])]);
    const ops = new Set(g.node!.map((n) => n.opType));
    expect(ops.has('Cast') || ops.has('Constant') || ops.has('ConstantOfShape')).toBe(false);
    const inits = new Map(g.initializer!.map((t) => [t.name!, t]));
    const weightMatMuls = g.node!.filter((n) => n.opType === 'MatMul' && (inits.get(n.input![1])?.dims ?? []).length === 2);
    // q, k, v, o, gate, up, down per layer, and the head.
    expect(weightMatMuls.length).toBe(cfg.numLayers * 7 + 1);
    // Tied: the embedding is stored once, transposed, and serves the lookup and the head.
    expect(inits.has('model.embed_tokens.weight')).toBe(false);
    expect(inits.get('model.embed_tokens.weight_t')!.dims!.map(Number)).toEqual([16, 30]);
    expect(
      g
        .node!.filter((n) => n.input!.includes('model.embed_tokens.weight_t'))
        .map((n) => n.opType)
        .sort(),
    ).toEqual(['Gather', 'MatMul']);
    // Qwen3: the attention scale lives in q_norm's weight.
    expect(inits.has('model.layers.0.self_attn.q_norm.weight_scaled')).toBe(true);
  });

  it('stores an untied head apart from the embedding, and refuses tensors that do not match the config', () => {
    const cfg = cfgOf('LlamaForCausalLM', false);
    const t = initLlmTensors(cfg, new Rng(2));
    const inits = new Set(decode(exportLlmOnnx(cfg, t)).graph!.initializer!.map((x) => x.name));
    expect(inits.has('model.embed_tokens.weight')).toBe(true);
    expect(inits.has('lm_head.weight_t')).toBe(true);
    const { 'model.layers.1.mlp.up_proj.weight': _dropped, ...missing } = t;
    expect(() => exportLlmOnnx(cfg, missing)).toThrow(
      /1 tensor\(s\) missing for LlamaForCausalLM \(model\.layers\.1\.mlp\.up_proj\.weight\)/,
    );
  });
});

describe('exportLlmOnnxExternal', () => {
  it('moves every tensor of 1 KiB or more to the data file (in order, 64-byte aligned) and keeps the graph and the rest', () => {
    const cfg = cfgOf('Qwen2ForCausalLM', true);
    const tensors = initLlmTensors(cfg, new Rng(3));
    const inline = decode(exportLlmOnnx(cfg, tensors)).graph!;
    const { model, data } = exportLlmOnnxExternal(cfg, tensors, 'weights.bin');
    const g = decode(model).graph!;
    expect(g.node!.map((n) => n.opType)).toEqual(inline.node!.map((n) => n.opType));
    const file = new Uint8Array(data.reduce((s, c) => s + c.length, 0));
    data.reduce((o, c) => (file.set(c, o), o + c.length), 0);
    let expected = 0;
    let moved = 0;
    for (const t of g.initializer!) {
      const before = inline.initializer!.find((x) => x.name === t.name)!;
      // Tensors under 1 KiB (shape constants, scalars, this tiny model's norms and smaller projections) stay inline.
      expect(t.dataLocation === 1, t.name!).toBe(before.rawData!.length >= 1024);
      if (t.dataLocation !== 1) continue;
      const kv = Object.fromEntries(t.externalData!.map((e) => [e.key, e.value]));
      expect(kv.location).toBe('weights.bin');
      expect(Number(kv.offset)).toBe(expected);
      expect(Number(kv.offset) % 64).toBe(0);
      expect(Array.from(file.subarray(Number(kv.offset), Number(kv.offset) + Number(kv.length)))).toEqual(Array.from(before.rawData!));
      expected += Math.ceil(Number(kv.length) / 64) * 64;
      moved++;
    }
    expect(moved).toBeGreaterThan(cfg.numLayers * 4); // at least q, o, gate/up/down-sized weights of every layer
    expect(file.length).toBe(expected);
  });
});

describe('host feeds', () => {
  it('ropeFeeds: the model’s cos table, and its sin table with the first half negated', () => {
    const cfg = { ...cfgOf('Qwen2ForCausalLM', true), rope: { type: 'linear' as const, factor: 2 } };
    const freq = ropeFrequencies(cfg);
    const positions = [0, 3, 17];
    const { cos, sin } = ropeTables(freq, positions);
    const f = ropeFeeds(freq, positions);
    expect(Array.from(f.cos)).toEqual(Array.from(cos));
    const D = cfg.headDim;
    for (let t = 0; t < positions.length; t++)
      for (let i = 0; i < D; i++) expect(f.sinSigned[t * D + i]).toBe(i < D / 2 ? -sin[t * D + i] : sin[t * D + i]);
  });

  it('cacheBias: written slots as given, unwritten slots masked, then the new columns', () => {
    // 2 query rows, P = 2 cached columns, S = 1 new column, capacity 4.
    const bias = Float32Array.from([0, -1e9, 0, 0, 0, 0]);
    expect(Array.from(cacheBias(bias, 2, 2, 1, 4))).toEqual([0, -1e9, -1e9, -1e9, 0, 0, 0, -1e9, -1e9, 0]);
    expect(() => cacheBias(bias, 2, 5, 1, 4)).toThrow(/expected 2×6 values/);
  });
});
