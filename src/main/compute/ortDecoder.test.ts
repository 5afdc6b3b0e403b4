/**
 * The decoder graph (ortDecoder.ts) is a speed change only: for the same weights, prompts, sampling options and
 * seed it must draw the same tokens as the original concat-cache path, which each test runs first as the reference.
 */
import { describe, expect, it } from 'vitest';
import {
  initWeights,
  mismatchStats,
  resolveModelConfig,
  type ModelConfig,
  type ModelWeights,
  type SamplingOptions,
} from '../../core/agent';
import { Rng } from '../../core/util/rng';
import { OrtDecoderLM } from './ortDecoder';
import { createOrtEngine } from './ortEngine';

/** Weights well away from init, so logits are far from uniform and a changed attention would change the samples. */
function spreadWeights(cfg: ModelConfig, seed: number, scale: number): ModelWeights {
  const rng = new Rng(seed);
  const w = initWeights(cfg, rng);
  for (const a of Object.values(w.tensors)) for (let i = 0; i < a.length; i++) a[i] += rng.normal() * scale;
  return w;
}

function prompts(rng: Rng, n: number, V: number, minLen: number, maxLen: number): number[][] {
  return Array.from({ length: n }, () => [1, ...Array.from({ length: rng.range(minLen, maxLen) }, () => 2 + rng.int(V - 2))]);
}

describe('onnxruntime decoder graph vs the concat-cache path', () => {
  const cfg = resolveModelConfig({ size: 'custom', dModel: 48, nLayers: 3, nHeads: 4, dFF: 96, maxSeqLen: 96 }, 40);

  it('draws the same tokens with the same seed: left-padded prompts, stop ids, top-k/top-p, greedy', async () => {
    const w = spreadWeights(cfg, 21, 0.15);
    const reference = await createOrtEngine(w, { decoder: 'concat-cache' });
    const decoder = await createOrtEngine(w);
    const rng = new Rng(5);
    const cases: Array<{ ps: number[][]; opts: SamplingOptions }> = [
      { ps: prompts(rng, 7, cfg.vocabSize, 1, 30), opts: { maxNewTokens: 40, temperature: 1, topP: 1, topK: 0, stopIds: [] } },
      {
        ps: prompts(rng, 5, cfg.vocabSize, 3, 25),
        opts: { maxNewTokens: 24, temperature: 0.8, topP: 0.9, topK: 12, stopIds: [7, 9, 11, 13, 15, 17, 19, 21] },
      },
      {
        ps: prompts(rng, 4, cfg.vocabSize, 2, 40),
        opts: { maxNewTokens: 30, temperature: 0, topP: 1, topK: 0, stopIds: [3, 5, 10, 20, 30] },
      },
      // A single row and a single new token: the prefill is the only call.
      { ps: prompts(rng, 1, cfg.vocabSize, 10, 11), opts: { maxNewTokens: 1, temperature: 1, topP: 1, topK: 0, stopIds: [] } },
    ];
    let tokens = 0;
    let stopped = 0;
    for (const [k, { ps, opts }] of cases.entries()) {
      for (const seed of [1, 2]) {
        const a = await reference.generate(ps, opts, new Rng(100 * k + seed));
        const b = await decoder.generate(ps, opts, new Rng(100 * k + seed));
        expect(b.tokens, `case ${k} seed ${seed}`).toEqual(a.tokens);
        expect(b.finish, `case ${k} seed ${seed}`).toEqual(a.finish);
        expect(mismatchStats(b.logProbs, a.logProbs).max).toBeLessThan(1e-5);
        tokens += a.tokens.flat().length;
        stopped += a.finish.filter((f) => f === 'stop').length;
      }
    }
    // The cases exercise what they claim: many sampled tokens, and rows that ended early on a stop id.
    expect(tokens).toBeGreaterThan(400);
    expect(stopped).toBeGreaterThan(0);
    // Different seeds still give different samples (the comparison above is not between constant outputs).
    const ps = cases[0].ps;
    expect((await decoder.generate(ps, cases[0].opts, new Rng(8))).tokens).not.toEqual(
      (await decoder.generate(ps, cases[0].opts, new Rng(9))).tokens,
    );
    await reference.dispose();
    await decoder.dispose();
  });

  it('the nano shape at the benchmark workload (16 prompts × 96 → 32) draws the same tokens', async () => {
    const nano = resolveModelConfig({ size: 'nano' }, 192);
    const w = spreadWeights(nano, 3, 0.05);
    const reference = await createOrtEngine(w, { decoder: 'concat-cache' });
    const decoder = await createOrtEngine(w);
    const ps = prompts(new Rng(4), 16, nano.vocabSize, 95, 96);
    const opts = { maxNewTokens: 32, temperature: 1, topP: 1, topK: 0, stopIds: [] };
    const a = await reference.generate(ps, opts, new Rng(6));
    const b = await decoder.generate(ps, opts, new Rng(6));
    expect(b.tokens).toEqual(a.tokens);
    expect(mismatchStats(b.logProbs, a.logProbs).max).toBeLessThan(1e-5);
    await reference.dispose();
    await decoder.dispose();
  });

  it('weights set after creation reach the decoder too', async () => {
    const reference = await createOrtEngine(spreadWeights(cfg, 31, 0.15), { decoder: 'concat-cache' });
    const decoder = await createOrtEngine(spreadWeights(cfg, 32, 0.15));
    const ps = prompts(new Rng(7), 4, cfg.vocabSize, 4, 12);
    const opts = { maxNewTokens: 16, temperature: 1, topP: 1, topK: 0, stopIds: [] };
    const before = await decoder.generate(ps, opts, new Rng(1));
    await decoder.setWeights(spreadWeights(cfg, 31, 0.15));
    const after = await decoder.generate(ps, opts, new Rng(1));
    expect(after.tokens).not.toEqual(before.tokens);
    expect(after.tokens).toEqual((await reference.generate(ps, opts, new Rng(1))).tokens);
    await reference.dispose();
    await decoder.dispose();
  });

  it('appending past the cache capacity, or an unknown decoder name, is a clear error', async () => {
    const engine = await createOrtEngine(spreadWeights(cfg, 41, 0.1));
    const session = (engine as unknown as { decoderSession: import('onnxruntime-node').InferenceSession }).decoderSession;
    const lm = new OrtDecoderLM(cfg, () => session, 4);
    lm.begin(1);
    await lm.append(new Int32Array([1, 2, 3]), new Int32Array([0, 1, 2]), new Float32Array(9), 3);
    await expect(lm.append(new Int32Array([4, 5]), new Int32Array([3, 4]), new Float32Array(10), 2)).rejects.toThrow(
      /appending 2 columns to 3 exceeds the cache capacity 4/,
    );
    lm.end();
    expect(() => new OrtDecoderLM(cfg, () => session, 0)).toThrow(/capacity must be an integer ≥ 1, got 0/);
    await expect(createOrtEngine(spreadWeights(cfg, 41, 0.1), { decoder: 'paged' as 'split-cache' })).rejects.toThrow(
      /decoder must be "split-cache" or "concat-cache", got "paged"/,
    );
    await engine.dispose();
  });
});
