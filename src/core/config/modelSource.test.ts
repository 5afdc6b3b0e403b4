/**
 * model.source (lab or hf:PATH) and LoRA in the run config: the lab default is unchanged, an hf: run must use the
 * engines a Hugging Face model trains with, and each conflict names the field and the fix.
 */
import { describe, expect, it } from 'vitest';
import { LORA_TARGETS } from '../llm/lora';
import { LORA_TARGET_NAMES, resolveConfig, validateConfig } from './index';

const HF_NEEDS = {
  'model.source': 'hf:/models/tiny-qwen3',
  'compute.rolloutEngine': 'tfjs',
  'compute.logProbEngine': 'trainer',
  'compute.refLogProbEngine': 'trainer',
  'warmStart.source': 'none',
} as const;

function issues(overrides: Record<string, string | number | boolean>) {
  const r = resolveConfig('sampo', 'sokoban', overrides);
  expect(r.config).toBeNull();
  return r.issues;
}

describe('model.source and model.lora', () => {
  it('defaults to the lab model without LoRA, and a stored config without the fields stays valid', () => {
    const { config } = resolveConfig('sampo', 'sokoban');
    expect(config!.model.source).toBe('lab');
    expect(config!.model.lora!.rank).toBe(0);
    const { source: _s, lora: _l, ...olderModel } = config!.model;
    expect(validateConfig({ ...config!, model: olderModel })).toEqual([]);
  });

  it('accepts an hf: run with LoRA when the engines are the ones it trains with', () => {
    const { config, issues: found } = resolveConfig('sampo', 'sokoban', {
      ...HF_NEEDS,
      'model.lora.rank': 8,
      'model.lora.targets': 'q_proj+v_proj',
    });
    expect(found).toEqual([]);
    expect(config!.model.lora).toEqual({ rank: 8, alpha: 32, dropout: 0.05, targets: 'q_proj+v_proj' });
  });

  it('lets onnxruntime sample an hf: run, at any rollout precision', () => {
    const { issues: found } = resolveConfig('sampo', 'sokoban', {
      ...HF_NEEDS,
      'compute.rolloutEngine': 'onnxruntime',
      'compute.rolloutPrecision': 'fp16',
    });
    expect(found).toEqual([]);
  });

  it('refuses a source that is neither lab nor hf:PATH', () => {
    for (const bad of ['hf:', 'qwen', '/models/x']) {
      const found = issues({ ...HF_NEEDS, 'model.source': bad });
      expect(found[0].field).toBe('model.source');
      expect(found[0].message).toContain('"hf:PATH"');
    }
  });

  it('refuses LoRA on the lab model, and unknown target projections', () => {
    const lab = issues({ 'model.lora.rank': 4 });
    expect(lab.map((i) => i.field)).toEqual(['model.lora.rank']);
    expect(lab[0].message).toContain('set model.source=hf:PATH');
    const t = issues({ ...HF_NEEDS, 'model.lora.rank': 4, 'model.lora.targets': 'q_proj+attn' });
    expect(t.map((i) => i.field)).toEqual(['model.lora.targets']);
    expect(t[0].message).toContain('"attn"');
  });

  it('refuses, one issue each with its fix, what an hf: model cannot train with', () => {
    const found = issues({
      'model.source': 'hf:/models/tiny-qwen3',
      'compute.workers': 2,
      'rollout.policyLag': 1,
      'compute.logProbEngine': 'trainer',
    });
    const by = Object.fromEntries(found.map((i) => [i.field, i.message]));
    // compute.rolloutEngine is not among them: onnxruntime (the default here) samples an hf model too.
    expect(Object.keys(by).sort()).toEqual(['compute.refLogProbEngine', 'compute.workers', 'rollout.policyLag', 'warmStart.source'].sort());
    expect(by['compute.refLogProbEngine']).toContain('set compute.refLogProbEngine=trainer');
    expect(by['compute.workers']).toContain('set compute.workers=1');
    expect(by['rollout.policyLag']).toContain('set rollout.policyLag=0');
    expect(by['warmStart.source']).toContain('set warmStart.source=none');
  });

  it("keeps its list of LoRA targets equal to the engine's", () => {
    expect([...LORA_TARGET_NAMES]).toEqual([...LORA_TARGETS]);
  });
});
