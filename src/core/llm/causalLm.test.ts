/**
 * Self-consistency of the tfjs model on a tiny random Qwen3-shaped config (the cross-check against Transformers is
 * src/main/compute/models/hfCrossCheck.integration.test.ts): the KV-cache path equals the full forward pass, left padding
 * does not change a row, tokenLogProbs equals log-softmax of forward, and sampling stops where it should.
 */
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../util/rng';
import { parseLlmConfig } from './config';
import { HfCausalLM } from './causalLm';
import { generateLlm } from './generate';
import { ropeFrequencies } from './rope';

const cfg = parseLlmConfig({
  architectures: ['Qwen3ForCausalLM'],
  hidden_size: 32,
  intermediate_size: 48,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  head_dim: 16,
  max_position_embeddings: 64,
  vocab_size: 40,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  rope_scaling: { rope_type: 'yarn', factor: 2 },
});

let model: HfCausalLM;
beforeAll(async () => {
  await tf.setBackend('cpu');
  model = HfCausalLM.random(cfg, new Rng(3), 0.3);
});
afterAll(() => model.dispose());

function logSoftmaxRow(row: number[], t: number): number {
  const m = Math.max(...row);
  const z = row.reduce((s, v) => s + Math.exp(v - m), 0);
  return row[t] - m - Math.log(z);
}

describe('HfCausalLM', () => {
  it('gives a row the same logits alone and left-padded in a batch', () => {
    const a = [5, 9, 2, 7, 1];
    const b = [3, 4];
    const alone = model.forward(Int32Array.from(b), 1, 2).arraySync()[0];
    const ids = Int32Array.from([...a, 0, 0, 0, ...b]);
    const mask = Uint8Array.from([1, 1, 1, 1, 1, 0, 0, 0, 1, 1]);
    const batch = model.forward(ids, 2, 5, mask).arraySync();
    for (let k = 0; k < 2; k++) for (let v = 0; v < cfg.vocabSize; v++) expect(batch[1][3 + k][v]).toBeCloseTo(alone[k][v], 5);
  });

  it('tokenLogProbs equals log-softmax of the forward logits under the response mask', () => {
    const rows = [
      { promptIds: [1, 2, 3], responseIds: [4, 5, 6, 7] },
      { promptIds: [8], responseIds: [9] },
    ];
    const o = model.tokenLogProbs(rows);
    const lp = o.logProbs.arraySync();
    expect(o.mask.arraySync()).toEqual([
      [1, 1, 1, 1],
      [1, 0, 0, 0],
    ]);
    for (const [i, r] of rows.entries()) {
      const full = [...r.promptIds, ...r.responseIds];
      const lg = model.forward(Int32Array.from(full), 1, full.length).arraySync()[0];
      r.responseIds.forEach((t, j) => expect(lp[i][j]).toBeCloseTo(logSoftmaxRow(lg[r.promptIds.length - 1 + j], t), 5));
    }
    expect(lp[1].slice(1).map(Math.abs)).toEqual([0, 0, 0]);
  });

  it('KV-cache greedy generation equals argmax over full forward passes', async () => {
    const prompts = [
      [1, 2, 3, 4],
      [5, 6],
    ];
    const g = await generateLlm(model, prompts, { maxNewTokens: 6, temperature: 0, topP: 1, topK: 0, stopIds: [] }, new Rng(1));
    for (const [i, p] of prompts.entries()) {
      const seq = [...p];
      for (let s = 0; s < 6; s++) {
        const lg = model.forward(Int32Array.from(seq), 1, seq.length).arraySync()[0][seq.length - 1];
        const best = lg.indexOf(Math.max(...lg));
        expect(g.tokens[i][s]).toBe(best);
        expect(g.logProbs[i][s]).toBeCloseTo(logSoftmaxRow(lg, best), 4);
        seq.push(best);
      }
    }
  });

  it('samples deterministically from the seed and stops at a stop id or a stop string', async () => {
    const opts = { maxNewTokens: 12, temperature: 1, topP: 0.9, topK: 20, stopIds: [] as number[] };
    const a = await generateLlm(model, [[1, 2], [3]], opts, new Rng(42));
    expect(await generateLlm(model, [[1, 2], [3]], opts, new Rng(42))).toEqual(a);
    expect(await generateLlm(model, [[1, 2], [3]], opts, new Rng(43))).not.toEqual(a);
    // One row, so that the Rng stream is the same until the stop.
    const one = (await generateLlm(model, [[1, 2]], opts, new Rng(42))).tokens[0];
    const stopId = one[3];
    const s = await generateLlm(model, [[1, 2]], { ...opts, stopIds: [stopId] }, new Rng(42));
    expect(s.tokens[0]).toEqual(one.slice(0, one.indexOf(stopId) + 1));
    expect(s.finish).toEqual(['stop']);
    // A stop string spanning two tokens: decode maps id → "<id>", so "<x><y>" appears once both are out.
    const decode = (ids: number[]): string => ids.map((t) => `<${t}>`).join('');
    const target = `<${one[4]}><${one[5]}>`;
    const cut = one.findIndex((_, k) => decode(one.slice(0, k + 1)).includes(target)) + 1;
    const t = await generateLlm(model, [[1, 2]], { ...opts, stopStrings: [target], decode }, new Rng(42));
    expect(t.tokens[0]).toEqual(one.slice(0, cut));
    expect(cut).toBeLessThanOrEqual(6);
    expect(t.finish).toEqual(['stop']);
    await expect(generateLlm(model, [[1]], { ...opts, stopStrings: ['x'] }, new Rng(1))).rejects.toThrow(
      /stopStrings need a decode function/,
    );
    await expect(generateLlm(model, [[1]], { ...opts, maxNewTokens: 64 }, new Rng(1))).rejects.toThrow(
      /exceeds max_position_embeddings 64/,
    );
  });

  it('yarn frequencies: extrapolated high frequencies, interpolated low ones, attention factor 0.1·ln(2)+1', () => {
    const f = ropeFrequencies(cfg);
    expect(f.scale).toBeCloseTo(0.1 * Math.log(2) + 1, 12);
    expect(f.invFreq[0]).toBe(1);
    expect(f.invFreq[7]).toBeCloseTo(10000 ** (-14 / 16) / 2, 9);
  });

  it('refuses token ids outside the vocabulary', () => {
    expect(() => model.forward(Int32Array.from([1, 40]), 1, 2)).toThrow(/token id 40 outside \[0, 40\)/);
  });
});
