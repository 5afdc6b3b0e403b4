/**
 * Every preset's actor loss on an HF checkpoint (the tiny Qwen3-shaped one, made by Transformers: see
 * tests/support/hfCheckpoints.ts) with LoRA: a Sokoban prompt through the model's chat template, G responses sampled
 * with the KV-cache engine, and one AdamW step on the adapters from the lab's own actorLoss with the preset's
 * parameters (built as the trainer's actorParamsOf builds them). The advantages are given (±1), since a random
 * model earns no reward; what is checked is the plumbing the catalogs see: log-probs, masks, gradients on the
 * adapters only, and an update that moves the log-probs the way the advantages ask. Needs the `llm` peer venv.
 */
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { actorLoss, stopGradient } from '../../../core/algorithms/index';
import { PRESET_NAMES, resolveConfig } from '../../../core/config/index';
import { buildPrompt, createEnv, parseResponse } from '../../../core/envs/index';
import { HfCausalLM } from '../../../core/llm/causalLm';
import { LoraAdapters, parseLoraSpec } from '../../../core/llm/lora';
import { LlmPolicy } from '../../../core/llm/policy';
import { AdamW } from '../../../core/training/adamw';
import { actorParamsOf } from '../../../core/training/trainer';
import { Rng } from '../../../core/util/rng';
import { hfTestCheckpoints } from '../../../../tests/support/hfCheckpoints';
import { initBackend } from '../backends';
import { loadHfFolder, type HfLoaded } from './hfFolder';

let folder: HfLoaded;
beforeAll(async () => {
  await initBackend('wasm');
  folder = await loadHfFolder(join(hfTestCheckpoints(), 'qwen3-fp16'));
}, 300_000);

const pad = (rows: number[][], R: number): tf.Tensor2D => tf.tensor2d(rows.map((r) => Array.from({ length: R }, (_, j) => r[j] ?? 0)));

async function presetStep(preset: string, seed: number): Promise<{ loss: number; gradNorm: number; moved: number; responses: string[] }> {
  const { config, issues } = resolveConfig(preset, 'sokoban');
  expect(issues).toEqual([]);
  const model = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: false });
  const lora = LoraAdapters.create(model, parseLoraSpec('r=4,alpha=8,dropout=0.1,targets=q_proj+v_proj+down_proj'), new Rng(seed));
  // B starts at zero (the adapted model equals the base); move it so the first step has gradients on A as well.
  const init = new Rng(seed + 100);
  for (const v of lora.trainableVariables()) {
    if (v.name.endsWith('lora_B.weight'))
      v.assign(
        tf.tensor(
          Float32Array.from({ length: v.size }, () => 0.02 * init.normal()),
          v.shape,
        ),
      );
  }
  const policy = new LlmPolicy(model, folder.tokenizer, lora);
  try {
    const env = createEnv('sokoban');
    const obs = env.reset(seed);
    const prompt = policy.promptIds(buildPrompt(env, obs, [], config!.env.historyWindow));
    const G = 4;
    const gen = await policy.engine().generate(
      Array.from({ length: G }, () => prompt),
      { maxNewTokens: 16, temperature: 1, topP: 1, topK: 0, stopIds: [] },
      new Rng(seed),
    );
    const responses = gen.tokens.map((t) => policy.decode(t));
    for (const text of responses) expect(typeof parseResponse('sokoban', text).formatValid).toBe('boolean');
    const rows = gen.tokens.map((t) => ({ promptIds: prompt, responseIds: t }));
    const adv = [1, -1, 1, -1];
    const R = Math.max(...rows.map((r) => r.responseIds.length));
    const before = await policy.engine().logProbs(rows, config!.rollout.temperature);
    const params = actorParamsOf(config!);
    const opt = new AdamW(policy.trainableVariables(), { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, gradClip: 1 });
    policy.setTraining(new Rng(seed + 1));
    const advT = tf.tensor2d(rows.map((r, i) => Array.from({ length: R }, (_, j) => (j < r.responseIds.length ? adv[i] : 0))));
    const oldT = pad(gen.logProbs, R);
    const refT = pad(before, R);
    const { value, grads } = tf.variableGrads(() => {
      const cur = policy.tokenLogProbs(rows, { temperature: config!.rollout.temperature });
      const res = actorLoss(
        {
          logProb: cur.logProbs,
          oldLogProb: params.bypass ? oldT : (stopGradient(cur.logProbs) as tf.Tensor2D),
          advantages: advT,
          mask: cur.mask,
          entropy: cur.entropy,
          refLogProb: refT,
        },
        params,
      );
      for (const m of Object.values(res.metrics)) (m as tf.Tensor).dispose();
      return res.value;
    }, policy.trainableVariables());
    const loss = value.dataSync()[0];
    expect(Object.keys(grads).sort()).toEqual(
      lora
        .trainableVariables()
        .map((v) => v.name)
        .sort(),
    );
    const rep = opt.step(grads, 1e-3);
    tf.dispose([value, ...Object.values(grads), advT, oldT, refT]);
    const after = await policy.engine().logProbs(rows, config!.rollout.temperature);
    // Σ_i A_i · Δ(mean log-prob of row i): positive when the update follows the advantages.
    const moved = rows.reduce(
      (s, r, i) => s + (adv[i] * (after[i].reduce((a, b) => a + b, 0) - before[i].reduce((a, b) => a + b, 0))) / r.responseIds.length,
      0,
    );
    return { loss, gradNorm: rep.gradNorm, moved, responses };
  } finally {
    lora.dispose();
    model.dispose();
  }
}

describe('presets on an HF checkpoint with LoRA (tfjs-wasm)', () => {
  for (const preset of PRESET_NAMES) {
    it(`${preset}: finite loss, adapter-only gradients, an update along the advantages`, async () => {
      const r = await presetStep(preset, 11);
      expect(Number.isFinite(r.loss)).toBe(true);
      expect(r.gradNorm).toBeGreaterThan(0);
      expect(r.moved).toBeGreaterThan(0);
    });
  }

  it('is a function of the seed: the same step twice gives the same loss, responses and update', async () => {
    const a = await presetStep('sampo', 5);
    const b = await presetStep('sampo', 5);
    expect(b).toEqual(a);
  });
});
