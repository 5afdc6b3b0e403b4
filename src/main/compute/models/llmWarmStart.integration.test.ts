/**
 * Behaviour cloning through the chat template makes an HF checkpoint answer in the agent format: the tiny random
 * Qwen3-shaped checkpoint (made by Transformers, tests/support/hfCheckpoints.ts), LoRA on every projection, a few
 * AdamW steps on Sokoban expert turns; afterwards greedy decoding of a cloned prompt gives a format-valid
 * `<think>…</think><action>…</action>` that the env parses, ending at the checkpoint's end-of-turn token.
 * Needs the `llm` peer venv.
 */
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseResponse } from '../../../core/envs/index';
import { HfCausalLM } from '../../../core/llm/causalLm';
import { LoraAdapters, parseLoraSpec } from '../../../core/llm/lora';
import { LlmPolicy } from '../../../core/llm/policy';
import { behaviourCloningLoss, llmExpertRows } from '../../../core/llm/warmStart';
import { AdamW } from '../../../core/training/adamw';
import { Rng } from '../../../core/util/rng';
import { hfTestCheckpoints } from '../../../../tests/support/hfCheckpoints';
import { initBackend } from '../backends';
import { loadHfFolder, type HfLoaded } from './hfFolder';

let folder: HfLoaded;
beforeAll(async () => {
  await initBackend('wasm');
  folder = await loadHfFolder(join(hfTestCheckpoints(), 'qwen3-fp16'));
}, 300_000);

describe('behaviour cloning an HF checkpoint (LoRA, tfjs-wasm)', () => {
  it("raises the expert responses' likelihood until greedy decoding answers in the format and stops", async () => {
    const model = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: false });
    const lora = LoraAdapters.create(model, parseLoraSpec('r=8,alpha=16,dropout=0'), new Rng(1));
    const policy = new LlmPolicy(model, folder.tokenizer, lora);
    try {
      // History window 0: the tiny checkpoint has 512 positions and its small BPE spends ~440 tokens on a Sokoban prompt.
      const rows = llmExpertRows(policy, 'sokoban', [1], 0).slice(0, 2);
      expect(rows.length).toBe(2);
      const opt = new AdamW(policy.trainableVariables(), { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, gradClip: 1 });
      const losses: number[] = [];
      for (let s = 0; s < 40; s++) {
        const { value, grads } = tf.variableGrads(() => behaviourCloningLoss(policy, rows), policy.trainableVariables());
        losses.push(value.dataSync()[0]);
        opt.step(grads, 1e-2);
        tf.dispose([value, ...Object.values(grads)]);
      }
      console.log(`BC loss ${losses[0].toFixed(3)} → ${losses[losses.length - 1].toFixed(3)} over ${losses.length} steps`);
      expect(losses[losses.length - 1]).toBeLessThan(0.2 * losses[0]);
      const g = await policy
        .engine()
        .generate([rows[0].promptIds], { maxNewTokens: 64, temperature: 0, topP: 1, topK: 0, stopIds: [] }, new Rng(2));
      const text = policy.decode(g.tokens[0]);
      const expected = policy.decode(rows[0].responseIds);
      console.log(`greedy after BC: ${JSON.stringify(text)} (expert: ${JSON.stringify(expected)})`);
      expect(parseResponse('sokoban', text).formatValid).toBe(true);
      expect(g.finish[0]).toBe('stop');
    } finally {
      lora.dispose();
      model.dispose();
    }
  });
});
