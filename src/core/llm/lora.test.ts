import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../util/rng';
import { parseLlmConfig } from './config';
import { HfCausalLM } from './causalLm';
import { LoraAdapters, loraParamCount, loraSettingsFromPeft, parseLoraSpec } from './lora';

const cfg = parseLlmConfig({
  architectures: ['LlamaForCausalLM'],
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 32,
  vocab_size: 20,
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
  tie_word_embeddings: false,
});
const ids = Int32Array.from([1, 5, 7, 3, 2, 9]);

let base: HfCausalLM;
beforeAll(async () => {
  await tf.setBackend('cpu');
  base = HfCausalLM.random(cfg, new Rng(1), 0.2);
});
afterAll(() => base.dispose());

describe('LoRA', () => {
  it('parses the CLI form with defaults and refuses bad values', () => {
    expect(parseLoraSpec('r=8,alpha=16')).toEqual({
      rank: 8,
      alpha: 16,
      dropout: 0.05,
      targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    });
    expect(parseLoraSpec('targets=q_proj+v_proj,dropout=0').targetModules).toEqual(['q_proj', 'v_proj']);
    expect(() => parseLoraSpec('r=0')).toThrow(/lora.rank: must be an integer ≥ 1, got 0/);
    expect(() => parseLoraSpec('targets=qkv')).toThrow(/unknown module "qkv"; known: q_proj/);
    expect(() => parseLoraSpec('rank16')).toThrow(/is not key=value/);
    expect(() => parseLoraSpec('beta=1')).toThrow(/unknown key "beta"/);
    expect(() => loraSettingsFromPeft({ peft_type: 'LORA', r: 4, lora_alpha: 8, target_modules: ['q_proj'], use_dora: true })).toThrow(
      /use_dora is not supported/,
    );
  });

  it('starts equal to the base (B = 0), trains only A and B, and its merged export equals the adapted model', () => {
    const before = base.forward(ids, 1, 6).arraySync();
    const m = HfCausalLM.fromTensors(cfg, base.getTensors(), { trainable: false });
    const lora = LoraAdapters.create(m, parseLoraSpec('r=2,alpha=4,dropout=0,targets=q_proj+v_proj+down_proj'), new Rng(2));
    lora.attach(m);
    const start = m.forward(ids, 1, 6).arraySync();
    expect(start).toEqual(before);
    expect(lora.paramCount()).toBe(2 * (2 * 16 + 16 * 2) + 2 * (2 * 16 + 8 * 2) + 2 * (2 * 24 + 16 * 2));
    expect(loraParamCount(cfg, lora.settings)).toBe(lora.paramCount());
    const { grads } = tf.variableGrads(
      () => tf.neg(tf.sum(m.tokenLogProbs([{ promptIds: [1, 5], responseIds: [7, 3, 2] }]).logProbs)) as tf.Scalar,
    );
    expect(Object.keys(grads).sort()).toEqual(
      lora
        .trainableVariables()
        .map((v) => v.name)
        .sort(),
    );
    // Move B off zero, then compare the adapted model with a plain model of the merged weights.
    for (const v of lora.trainableVariables()) v.assign(tf.add(v, tf.fill(v.shape, 0.05)));
    const adapted = m.forward(ids, 1, 6).dataSync();
    const merged = HfCausalLM.fromTensors(cfg, lora.mergedTensors(m));
    const plain = merged.forward(ids, 1, 6).dataSync();
    for (let i = 0; i < adapted.length; i++) expect(plain[i]).toBeCloseTo(adapted[i], 4);
    const peft = lora.toPeft('base');
    expect(peft.tensors.map((t) => t.name)).toContain('base_model.model.model.layers.1.mlp.down_proj.lora_B.weight');
    expect(peft.adapterConfig).toMatchObject({ peft_type: 'LORA', r: 2, lora_alpha: 4, target_modules: ['q_proj', 'v_proj', 'down_proj'] });
    merged.dispose();
    lora.dispose();
    m.dispose();
  });

  it('applies seeded dropout only in training mode', () => {
    const m = HfCausalLM.fromTensors(cfg, base.getTensors(), { trainable: false });
    const lora = LoraAdapters.create(m, parseLoraSpec('r=2,alpha=4,dropout=0.5,targets=q_proj'), new Rng(2));
    for (const v of lora.trainableVariables()) v.assign(tf.add(v, tf.fill(v.shape, 0.3)));
    lora.attach(m);
    const evalA = m.forward(ids, 1, 6).dataSync();
    expect(m.forward(ids, 1, 6).dataSync()).toEqual(evalA);
    lora.setTraining(new Rng(9));
    const t1 = m.forward(ids, 1, 6).dataSync();
    lora.setTraining(new Rng(9));
    expect(m.forward(ids, 1, 6).dataSync()).toEqual(t1);
    expect(t1).not.toEqual(evalA);
    lora.dispose();
    m.dispose();
  });
});
