/**
 * Behaviour cloning: the recipe is deterministic (same config + seed + backend ⇒ identical weights), and it lifts
 * format validity far above a random policy's (a freshly initialised model essentially never emits the format).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { warmStartRecipe, envSpecOf } from '../src/core/training/warmstart';
import { evaluatePolicy } from '../src/core/training/evaluate';
import { TfjsRolloutEngine } from '../src/core/agent/tfjsEngine';
import { heldOutSeeds } from '../src/core/envs/index';
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
