/**
 * Behaviour cloning: the recipe is deterministic (same config + seed + backend ⇒ identical weights), and it lifts
 * format validity far above a random policy's (a freshly initialised model essentially never emits the format).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { warmStartRecipe, envSpecOf } from '../src/core/training/warmstart';
import { evaluatePolicy } from '../src/core/training/evaluate';
import { TfjsRolloutEngine } from '../src/core/agent/tfjsEngine';
import { expertEpisode, heldOutSeeds } from '../src/core/envs/index';
import { fitEnvTokenizer, makeEnvFactory } from '../src/core/training/data';
import { fitTestbedTokenizer } from '../src/core/agent/corpus';
import { Rng } from '../src/core/util/rng';
import { resolveConfig, type RunConfig } from '../src/core/config/index';
import { fakeClock, tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

async function greedyFormatValidity(config: RunConfig, updates: number): Promise<number> {
  const cfg = { ...config, warmStart: { ...config.warmStart, bcUpdates: updates } };
  const { tok, model } = await warmStartRecipe(cfg, fakeClock());
  const out = await evaluatePolicy({
    engine: new TfjsRolloutEngine(model),
    tokenizer: tok,
    spec: envSpecOf(cfg),
    seeds: heldOutSeeds(4),
    temperature: 0,
    topP: 1,
    topK: 0,
    maxResponseTokens: cfg.rollout.maxResponseTokens,
    maxSeqLen: model.config.maxSeqLen,
    rng: new Rng(1),
  });
  model.dispose();
  return out.summary.validFormatRatio;
}

describe('behaviour-cloning warm start', () => {
  const cfg = tinyConfig('sampo', { 'model.dModel': 32, 'model.dFF': 64, 'warmStart.bcBatchRows': 8, 'warmStart.bcLr': 5e-3 });

  it('is deterministic: the same recipe gives bit-identical weights', async () => {
    const small = { ...cfg, warmStart: { ...cfg.warmStart, bcUpdates: 3 } };
    const a = await warmStartRecipe(small, fakeClock());
    const b = await warmStartRecipe(small, fakeClock());
    const wa = a.model.getWeights().tensors;
    const wb = b.model.getWeights().tensors;
    for (const k of Object.keys(wa)) expect(Array.from(wb[k])).toEqual(Array.from(wa[k]));
    expect(a.report.finalLoss).toBe(b.report.finalLoss);
    a.model.dispose();
    b.model.dispose();
  });

  it('lifts greedy format validity far above an untrained policy', async () => {
    const before = await greedyFormatValidity(cfg, 0);
    const after = await greedyFormatValidity(cfg, 50);
    expect(before).toBeLessThan(0.1);
    expect(after).toBeGreaterThan(0.6);
  });
});

describe('env tokenizers', () => {
  it('give every shop product id one token, so a click copies one token from the page', () => {
    const spec = { name: 'shop', settings: {}, maxSteps: 15, historyWindow: 1 };
    const tok = fitEnvTokenizer(spec);
    const env = makeEnvFactory(spec)();
    const ids = env.identifiers?.() ?? [];
    expect(ids.length).toBe(2000);
    for (const id of ids) expect(tok.id(id), id).toBeDefined();
    const ep = expertEpisode(env, heldOutSeeds(1)[0], 1);
    const click = ep.turns.map((t) => t.response).find((r) => /click\[b\d+\]/.test(r));
    const product = /click\[(b\d+)\]/.exec(click ?? '')?.[1] ?? '';
    expect(tok.encode(click ?? '')).toContain(tok.id(product));
  });
  it('leave envs without identifiers exactly as version 1 fitted them', () => {
    const spec = { name: 'sokoban', settings: {}, maxSteps: 20, historyWindow: 1 };
    const v1 = fitTestbedTokenizer({ envs: ['sokoban'], historyWindow: 1, version: 1 });
    expect(fitEnvTokenizer(spec).vocab).toEqual(v1.vocab);
  });
});

describe('warmStart.identifierTypeInit', () => {
  it('gives every shop id embedding one shared direction at init, and leaves every other row as it was', async () => {
    const base = resolveConfig('sampo', 'shop', { 'warmStart.source': 'scratch', 'warmStart.bcUpdates': 0 }).config!;
    const shared = resolveConfig('sampo', 'shop', { 'warmStart.source': 'scratch', 'warmStart.bcUpdates': 0, 'warmStart.identifierTypeInit': 2 }).config!;
    const a = await warmStartRecipe(base, fakeClock());
    const b = await warmStartRecipe(shared, fakeClock());
    const d = a.model.config.dModel;
    const wa = a.model.getWeights().tensors.wte;
    const wb = b.model.getWeights().tensors.wte;
    const ids = new Set(['b00000', 'b00001', 'b01048', 'b01999'].map((p) => a.tok.id(p)!));
    const row = (w: Float32Array, r: number) => w.subarray(r * d, (r + 1) * d);
    const cos = (x: Float32Array, y: Float32Array) => {
      let xy = 0, xx = 0, yy = 0;
      for (let j = 0; j < d; j++) { xy += x[j] * y[j]; xx += x[j] * x[j]; yy += y[j] * y[j]; }
      return xy / Math.sqrt(xx * yy);
    };
    const [i0, i1] = [...ids];
    // scale 2: the shared part has 4× the per-id variance, so two ids' embeddings have cosine ≈ 0.8 (≈ 0 without)
    expect(cos(row(wb, i0), row(wb, i1))).toBeGreaterThan(0.5);
    expect(Math.abs(cos(row(wa, i0), row(wa, i1)))).toBeLessThan(0.5);
    const word = a.tok.id(' search')!;
    expect(word).toBeGreaterThan(7);
    expect(ids.has(word)).toBe(false);
    expect(row(wb, word)).toEqual(row(wa, word));
    a.model.dispose();
    b.model.dispose();
  });
});
