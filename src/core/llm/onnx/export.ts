/**
 * A Hugging Face causal LM (Qwen2 / Qwen3 / Llama, src/core/llm) as an ONNX graph with a key/value cache, for
 * onnxruntime-node rollouts (src/main/compute/ortLlmEngine.ts). The weights are the tensors given — the model's
 * current tfjs variables, with LoRA adapters merged in (`llmOnnxTensors`) — exported in float32;
 * compute.rolloutPrecision's fp16 / int8 rewrites (src/main/compute/ortPrecision.ts) apply to the bytes as they do to
 * the lab's own graphs (no Cast or Constant node here, every weight product a MatMul with a 2-D initializer).
 *
 * One graph serves prefill, each decoding step and full-sequence scoring (B batch, S appended columns, cap cached
 * slots, M selected rows, KV key/value heads, D head_dim, V vocabulary):
 *   inputs   input_ids int32 [B,S] · rope_cos, rope_sin float [B,S,D] (rope.ts: host tables, sine signed)
 *            attn_bias float [B,1,S,cap+S] (0 attend, −1e9 hidden: causality, padding, unwritten cache slots)
 *            select int32 [M] (rows of the flattened B·S stream whose next-token logits are wanted)
 *            cache_key_t_<l> float [B,KV,D,cap] · cache_value_<l> float [B,KV,cap,D]   for every layer l
 *   outputs  logits float [M,V] · new_key_t_<l> float [B,KV,D,S] · new_value_<l> float [B,KV,S,D]
 * A decoding step selects each row's last column; scoring selects the positions that predict response tokens
 * (so the vocabulary projection runs on those rows only, as HfCausalLM.tokenLogProbs does); the final RMSNorm runs on
 * the selected rows only. The residual stream is 2-D [B·S, d], so every linear is one MatMul.
 *
 * Tied embeddings are stored once, transposed ([d, V]) for the output projection; the token lookup gathers its
 * columns (Gather on axis 1, then a Transpose of the few looked-up rows).
 */
import { checkLlmTensors, type HfCausalLM, type LlmTensors } from '../causalLm';
import { llmWeightSpecs, type LlmConfig } from '../config';
import type { LoraAdapters } from '../lora';
import { attentionNode } from './attention';
import { attrInt, attrInts, FLOAT, INT32, OnnxGraph, transposeRows } from '../../util/onnxGraph';
import { mlpNode } from './mlp';
import { rmsNormNode } from './rmsNorm';

export const LLM_ONNX_OPSET = 17;

/** The tensors to export: the model's current variables, with LoRA's (α/r)·B·A folded into the adapted weights. */
export function llmOnnxTensors(model: HfCausalLM, lora: LoraAdapters | null): LlmTensors {
  return lora ? lora.mergedTensors(model) : model.getTensors();
}

/** Serialise the model with these weights as the graph described above. */
export function exportLlmOnnx(cfg: LlmConfig, tensors: LlmTensors): Uint8Array {
  return llmGraph(cfg, tensors).encode('hf_causal_lm', LLM_ONNX_OPSET);
}

/**
 * The same graph with its weights as ONNX external data (src/core/util/onnxGraph.ts, encodeExternal): for models whose float32 weights
 * pass the 2 GiB a protobuf message can hold. The caller writes `data` to the file `location` beside the model.
 */
export function exportLlmOnnxExternal(cfg: LlmConfig, tensors: LlmTensors, location: string): { model: Uint8Array; data: Uint8Array[] } {
  return llmGraph(cfg, tensors).encodeExternal('hf_causal_lm', LLM_ONNX_OPSET, location);
}

function llmGraph(cfg: LlmConfig, tensors: LlmTensors): OnnxGraph {
  const specs = llmWeightSpecs(cfg);
  checkLlmTensors(cfg, Object.keys(tensors), (n) => {
    const s = specs.find((x) => x.name === n);
    const t = tensors[n];
    if (!t) return undefined;
    return s && t.length === s.shape.reduce((a, b) => a * b, 1) ? s.shape : [t.length];
  });
  const { hiddenSize: d, numHeads: H, numKvHeads: KV, headDim: D, vocabSize: V, numLayers: L } = cfg;
  const G = H / KV;
  const g = new OnnxGraph();

  g.input('input_ids', INT32, ['batch', 'seq']);
  g.input('rope_cos', FLOAT, ['batch', 'seq', D]);
  g.input('rope_sin', FLOAT, ['batch', 'seq', D]);
  g.input('attn_bias', FLOAT, ['batch', 1, 'seq', 'keys']);
  g.input('select', INT32, ['rows']);
  g.output('logits', FLOAT, ['rows', V]);
  for (let l = 0; l < L; l++) {
    g.input(`cache_key_t_${l}`, FLOAT, ['batch', KV, D, 'cap']);
    g.input(`cache_value_${l}`, FLOAT, ['batch', KV, 'cap', D]);
    g.output(`new_key_t_${l}`, FLOAT, ['batch', KV, D, 'seq']);
    g.output(`new_value_${l}`, FLOAT, ['batch', KV, 'seq', D]);
  }

  // Shapes every layer shares, read off the inputs once.
  const bs = g.node('Shape', ['input_ids'], 'bs');
  const splitAt = g.node(
    'Concat',
    [
      g.node('Shape', ['cache_value_0'], 'cap', [attrInt('start', 2), attrInt('end', 3)]),
      g.node('Shape', ['input_ids'], 'seq', [attrInt('start', 1), attrInt('end', 2)]),
    ],
    'split_at',
    [attrInt('axis', 0)],
  );
  const shared = {
    cos: g.node('Reshape', ['rope_cos', g.ints([-1, 1, D])], 'cos'),
    sinSigned: g.node('Reshape', ['rope_sin', g.ints([-1, 1, D])], 'sin'),
    bias: G > 1 ? g.node('Tile', ['attn_bias', g.ints([1, 1, G, 1])], 'bias_g') : 'attn_bias',
    q5: g.node('Concat', [bs, g.ints([KV, G, D])], 'q5_shape', [attrInt('axis', 0)]),
    kv4: g.node('Concat', [bs, g.ints([KV, D])], 'kv4_shape', [attrInt('axis', 0)]),
    splitAt,
  };

  const E = tensors['model.embed_tokens.weight'];
  let x: string;
  let head: string;
  if (cfg.tieWordEmbeddings) {
    head = g.float('model.embed_tokens.weight_t', [d, V], transposeRows(E, V, d));
    const cols = g.node('Gather', [head, 'input_ids'], 'emb_cols', [attrInt('axis', 1)]); // [d, B, S]
    x = g.node('Reshape', [g.node('Transpose', [cols], 'emb', [attrInts('perm', [1, 2, 0])]), g.ints([-1, d])], 'x');
  } else {
    const embed = g.float('model.embed_tokens.weight', [V, d], E);
    x = g.node('Reshape', [g.node('Gather', [embed, 'input_ids'], 'emb', [attrInt('axis', 0)]), g.ints([-1, d])], 'x');
    head = g.float('lm_head.weight_t', [d, V], transposeRows(tensors['lm_head.weight'], V, d));
  }

  const eps = cfg.rmsNormEps;
  for (let l = 0; l < L; l++) {
    const p = `model.layers.${l}.`;
    const inNorm = g.float(`${p}input_layernorm.weight`, [d], tensors[`${p}input_layernorm.weight`]);
    x = g.node('Add', [x, attentionNode(g, cfg, tensors, l, rmsNormNode(g, x, inNorm, eps), shared)], 'res_attn');
    const postNorm = g.float(`${p}post_attention_layernorm.weight`, [d], tensors[`${p}post_attention_layernorm.weight`]);
    x = g.node('Add', [x, mlpNode(g, cfg, tensors, l, rmsNormNode(g, x, postNorm, eps))], 'res_mlp');
  }
  const picked = g.node('Gather', [x, 'select'], 'picked', [attrInt('axis', 0)]);
  const finalNorm = g.float('model.norm.weight', [d], tensors['model.norm.weight']);
  g.node('MatMul', [rmsNormNode(g, picked, finalNorm, eps), head], 'logits', [], ['logits']);
  return g;
}
