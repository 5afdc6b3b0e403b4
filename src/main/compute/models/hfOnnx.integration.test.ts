/**
 * The ONNX export of the HF causal LMs on onnxruntime-node (src/core/llm/onnx, src/main/compute/ortLlmEngine.ts)
 * against Hugging Face Transformers and the lab's tfjs model, on the checkpoints Transformers made
 * (tests/support/hfCheckpoints.ts: Qwen2 fp32, Llama bf16 sharded, Qwen3-shaped fp16), float32 export:
 *   - logits of the chat-templated reference rows, right-padded (prompt + response) and left-padded (the prompts, as
 *     generation lays them out): max |Δ| ≤ 1e-4 against Transformers' logits and against tfjs;
 *   - response log-probs against Transformers' and tfjs's; with the PEFT adapters merged into the export, against PEFT's;
 *   - 32 greedy tokens through the KV cache, identical to Transformers' generate and to the tfjs engine;
 *   - the RolloutEngine (OrtLlmRolloutEngine) against LlmRolloutEngine on a Sokoban prompt through the chat template:
 *     the same tokens from the same seed (temperature, top-p, top-k, stop ids, `</action>`), and the trainer-side
 *     mismatch (the engine's behaviour log-probs vs tfjs's recomputation) ≤ 1e-4;
 *   - the Qwen3 checkpoint against Transformers 4.51.3's own Qwen3ForCausalLM (the llm-qwen3 peer, as hfCrossCheck).
 * Needs the `llm` and `llm-qwen3` peer venvs (bash scripts/setup.sh).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mismatchStats } from '../../../core/agent/mismatch';
import { buildPrompt, createEnv } from '../../../core/envs/index';
import { HfCausalLM } from '../../../core/llm/causalLm';
import { generateLlm } from '../../../core/llm/generate';
import { LoraAdapters } from '../../../core/llm/lora';
import { llmOnnxTensors } from '../../../core/llm/onnx';
import { LlmPolicy } from '../../../core/llm/policy';
import { Rng } from '../../../core/util/rng';
import { HF_TEST_MODELS, hfTestCheckpoints } from '../../../../tests/support/hfCheckpoints';
import { maxLogitDiff, pack, qwen3PeerAnswer } from '../../../../tests/support/hfReference';
import { initBackend } from '../backends';
import { createOrtLlmEngine, OrtLlm } from '../ortLlmEngine';
import { loadHfFolder, loadPeftAdapter, type HfLoaded } from './hfFolder';

interface Reference {
  rows: Array<{ promptIds: number[]; responseIds: number[] }>;
  padId: number;
  logits: number[][][];
  tokenLogProbs: number[][];
  leftPadded: { prompts: number[][]; logits: number[][][] };
  greedy: { prompts: number[][]; tokens: number[][] };
  lora: { tokenLogProbs: number[][] };
}

/** tfjs logits of a packed batch in the reference's layout (real columns per row). */
function tfjsLogits(model: HfCausalLM, seqs: number[][], p: ReturnType<typeof pack>): number[][][] {
  const V = model.config.vocabSize;
  const lg = model.forward(p.ids, seqs.length, p.T, p.mask);
  const data = lg.dataSync();
  lg.dispose();
  return seqs.map((s, i) => s.map((_, k) => Array.from(data.subarray(p.at(i, k) * V, (p.at(i, k) + 1) * V))));
}

function tfjsLogProbs(model: HfCausalLM, rows: Reference['rows'], temperature = 1): number[][] {
  const o = model.tokenLogProbs(rows, { temperature });
  const lp = o.logProbs.arraySync() as number[][];
  tf.dispose([o.logProbs, o.entropy, o.mask]);
  return lp.map((r, i) => r.slice(0, rows[i].responseIds.length));
}

let root = '';
beforeAll(async () => {
  root = hfTestCheckpoints();
  await initBackend('wasm');
}, 300_000);

for (const name of HF_TEST_MODELS) {
  describe(`${name} exported to ONNX (onnxruntime-node, float32)`, () => {
    let folder: HfLoaded;
    let ref: Reference;
    let model: HfCausalLM;
    beforeAll(async () => {
      folder = await loadHfFolder(join(root, name));
      ref = JSON.parse(readFileSync(join(root, name, 'reference.json'), 'utf8')) as Reference;
      model = HfCausalLM.fromTensors(folder.config, folder.tensors);
    });
    afterAll(() => model.dispose());

    it('logits, log-probs and 32 greedy tokens match Transformers and the tfjs model', async () => {
      const V = folder.config.vocabSize;
      const ort = await OrtLlm.create(folder.config, llmOnnxTensors(model, null));
      try {
        const full = ref.rows.map((r) => [...r.promptIds, ...r.responseIds]);
        const right = pack(full, ref.padId, false);
        const rightLogits = await ort.forwardLogits(right.ids, full.length, right.T, right.mask);
        const left = pack(ref.leftPadded.prompts, ref.padId, true);
        const leftLogits = await ort.forwardLogits(left.ids, ref.leftPadded.prompts.length, left.T, left.mask);
        const d = {
          rightVsTransformers: maxLogitDiff(rightLogits, V, ref.logits, right.at),
          rightVsTfjs: maxLogitDiff(rightLogits, V, tfjsLogits(model, full, right), right.at),
          leftVsTransformers: maxLogitDiff(leftLogits, V, ref.leftPadded.logits, left.at),
          leftVsTfjs: maxLogitDiff(leftLogits, V, tfjsLogits(model, ref.leftPadded.prompts, left), left.at),
        };
        const lp = await ort.responseLogProbs(ref.rows);
        const dLogp = {
          vsTransformers: mismatchStats(lp, ref.tokenLogProbs).max,
          vsTfjs: mismatchStats(lp, tfjsLogProbs(model, ref.rows)).max,
        };
        const greedy = { maxNewTokens: 32, temperature: 0, topP: 1, topK: 0, stopIds: [] };
        const gen = await ort.generate(ref.greedy.prompts, greedy, new Rng(7), ref.padId);
        const tfjsGen = await generateLlm(model, ref.greedy.prompts, greedy, new Rng(7), ref.padId);
        console.log(
          `onnx ${name}: max|Δ| logits vs Transformers ${d.rightVsTransformers.toExponential(2)} (left-padded ${d.leftVsTransformers.toExponential(2)}), vs tfjs ${d.rightVsTfjs.toExponential(2)} (${d.leftVsTfjs.toExponential(2)}); log-probs vs Transformers ${dLogp.vsTransformers.toExponential(2)}, vs tfjs ${dLogp.vsTfjs.toExponential(2)}; greedy behaviour log-probs vs tfjs ${mismatchStats(gen.logProbs, tfjsGen.logProbs).max.toExponential(2)}`,
        );
        for (const [k, v] of Object.entries({ ...d, ...dLogp })) expect(v, k).toBeLessThanOrEqual(1e-4);
        expect(gen.tokens).toEqual(ref.greedy.tokens);
        expect(gen.tokens).toEqual(tfjsGen.tokens);
        expect(gen.finish).toEqual(ref.greedy.tokens.map(() => 'length'));
        expect(mismatchStats(gen.logProbs, tfjsGen.logProbs).max).toBeLessThanOrEqual(1e-4);
      } finally {
        await ort.release();
      }
    });

    it("PEFT's LoRA adapters merged into the export give PEFT's log-probs", async () => {
      const base = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: false });
      const peft = await loadPeftAdapter(join(root, name, 'lora'));
      const lora = LoraAdapters.fromTensors(base, peft.settings, peft.tensors);
      lora.attach(base);
      const ort = await OrtLlm.create(folder.config, llmOnnxTensors(base, lora));
      try {
        const lp = await ort.responseLogProbs(ref.rows);
        const vsPeft = mismatchStats(lp, ref.lora.tokenLogProbs).max;
        const vsTfjs = mismatchStats(lp, tfjsLogProbs(base, ref.rows)).max;
        const vsBase = mismatchStats(lp, ref.tokenLogProbs).max;
        console.log(`onnx ${name} LoRA merged: max|Δ| log-probs vs PEFT ${vsPeft.toExponential(2)}, vs tfjs ${vsTfjs.toExponential(2)}`);
        expect(vsPeft).toBeLessThanOrEqual(1e-4);
        expect(vsTfjs).toBeLessThanOrEqual(1e-4);
        expect(vsBase).toBeGreaterThan(1e-3); // the adapters changed the model, so the check above means something
      } finally {
        await ort.release();
        lora.dispose();
        base.dispose();
      }
    });

    it('the RolloutEngine samples as LlmRolloutEngine from the same seed, and scores as the trainer does', async () => {
      const policy = new LlmPolicy(model, folder.tokenizer);
      const env = createEnv('sokoban');
      const prompt = policy.promptIds(buildPrompt(env, env.reset(3), [], 2));
      const prompts = [prompt, prompt, prompt, ...ref.greedy.prompts];
      const opts = { maxNewTokens: 32, temperature: 1, topP: 0.95, topK: 40, stopIds: [] };
      const engine = await createOrtLlmEngine(policy);
      try {
        expect(engine.name).toBe('onnxruntime-cpu-llm-kvcache');
        const got = await engine.generate(prompts, opts, new Rng(21));
        const want = await policy.engine().generate(prompts, opts, new Rng(21));
        expect(got.tokens).toEqual(want.tokens);
        expect(got.finish).toEqual(want.finish);
        const rows = prompts.map((p, i) => ({ promptIds: p, responseIds: got.tokens[i] }));
        const trainer = await policy.engine().logProbs(rows, opts.temperature);
        const mismatch = mismatchStats(got.logProbs, trainer);
        const scored = mismatchStats(await engine.logProbs(rows, opts.temperature), trainer);
        console.log(
          `onnx ${name} engine: ${got.tokens.map((t) => t.length).join('/')} tokens (${got.finish.join(',')}), mismatch max ${mismatch.max.toExponential(2)} mean ${mismatch.mean.toExponential(2)}, scoring vs trainer ${scored.max.toExponential(2)}`,
        );
        expect(mismatch.max).toBeLessThanOrEqual(1e-4);
        expect(scored.max).toBeLessThanOrEqual(1e-4);
      } finally {
        await engine.dispose();
      }
    });
  });
}

describe("qwen3-fp16's ONNX export vs Transformers 4.51.3's own Qwen3ForCausalLM", () => {
  it('logits of the padded reference rows match (max |Δ| ≤ 1e-4)', async () => {
    const dir = join(root, 'qwen3-fp16');
    const ref = JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')) as Reference;
    const peer = qwen3PeerAnswer<{ transformers: string; logits: number[][][] }>(dir);
    expect(peer.transformers).toBe('4.51.3');
    const folder = await loadHfFolder(dir);
    const ort = await OrtLlm.create(folder.config, folder.tensors);
    try {
      const full = ref.rows.map((r) => [...r.promptIds, ...r.responseIds]);
      const right = pack(full, ref.padId, false);
      const d = maxLogitDiff(
        await ort.forwardLogits(right.ids, full.length, right.T, right.mask),
        folder.config.vocabSize,
        peer.logits,
        right.at,
      );
      console.log(`onnx qwen3-fp16 vs Qwen3ForCausalLM 4.51.3: max|Δ| logits ${d.toExponential(2)}`);
      expect(d).toBeLessThanOrEqual(1e-4);
    } finally {
      await ort.release();
    }
  });
});
