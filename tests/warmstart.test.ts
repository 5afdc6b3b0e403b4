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
import type { RunConfig } from '../src/core/config/index';
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
