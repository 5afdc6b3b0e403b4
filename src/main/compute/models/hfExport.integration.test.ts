/**
 * What the lab writes, read back by Hugging Face's own loaders (the `llm` peer venv): a LoRA adapter trained here
 * loads with PeftModel.from_pretrained onto the original checkpoint, and the merged export loads with
 * AutoModelForCausalLM.from_pretrained; both give the lab's logits (max |Δ| ≤ 1e-4).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HfCausalLM } from '../../../core/llm/causalLm';
import { LoraAdapters, parseLoraSpec } from '../../../core/llm/lora';
import { Rng } from '../../../core/util/rng';
import { hfTestCheckpoints } from '../../../../tests/support/hfCheckpoints';
import { venvPython } from '../../../../tests/support/peers';
import { initBackend } from '../backends';
import { loadHfFolder, loadPeftAdapter } from './hfFolder';
import { saveLoraAdapter, saveMergedModel } from './hfExport';

const PEER = resolve(import.meta.dirname, '..', '..', '..', '..', 'tests', 'peers', 'hf_export_peer.py');
let root = '';
const out = mkdtempSync(join(tmpdir(), 'arlarena-hf-export-'));
beforeAll(async () => {
  root = hfTestCheckpoints();
  await initBackend('wasm');
}, 300_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('exports read back by Transformers and PEFT', () => {
  for (const name of ['qwen2-fp32', 'llama-bf16-sharded'] as const) {
    it(`${name}: a lab-trained LoRA adapter and the merged model give the lab's logits`, async () => {
      const src = join(root, name);
      const folder = await loadHfFolder(src);
      const model = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: false });
      const lora = LoraAdapters.create(
        model,
        parseLoraSpec('r=4,alpha=16,dropout=0.1,targets=q_proj+k_proj+o_proj+gate_proj+up_proj'),
        new Rng(3),
      );
      // Stand in for training: move every adapter tensor (B starts at zero).
      const rng = new Rng(4);
      for (const v of lora.trainableVariables())
        v.assign(
          tf.add(
            v,
            tf.tensor(
              Float32Array.from({ length: v.size }, () => 0.05 * rng.normal()),
              v.shape,
            ),
          ),
        );
      lora.attach(model);
      const ids = folder.tokenizer.applyChatTemplate([{ role: 'user', content: 'push the box left' }], { addGenerationPrompt: true });
      const lab = model.forward(Int32Array.from(ids), 1, ids.length).dataSync();
      const adapterDir = join(out, `${name}-adapter`);
      const mergedDir = join(out, `${name}-merged`);
      saveLoraAdapter(adapterDir, lora, src);
      saveMergedModel(mergedDir, src, folder.rawConfig, model, lora);
      // The lab reads its own adapter back to the same tensors.
      const back = await loadPeftAdapter(adapterDir);
      expect(back.settings).toEqual(lora.settings);
      for (const [k, v] of Object.entries(lora.vars)) expect(back.tensors[k]).toEqual(v.dataSync());
      lora.dispose();
      model.dispose();
      const peer = JSON.parse(
        execFileSync(venvPython('llm'), [PEER, src, adapterDir, mergedDir, JSON.stringify(ids)], {
          encoding: 'utf8',
          maxBuffer: 1 << 28,
          env: { ...process.env, TORCH_THREADS: '1' },
        }),
      ) as { adapter: number[][]; merged: number[][] };
      const V = folder.config.vocabSize;
      let dA = 0;
      let dM = 0;
      for (let t = 0; t < ids.length; t++) {
        for (let v = 0; v < V; v++) {
          dA = Math.max(dA, Math.abs(lab[t * V + v] - peer.adapter[t][v]));
          dM = Math.max(dM, Math.abs(lab[t * V + v] - peer.merged[t][v]));
        }
      }
      console.log(
        `${name}: lab vs PeftModel.from_pretrained max|Δ| ${dA.toExponential(2)}, vs merged AutoModelForCausalLM ${dM.toExponential(2)}`,
      );
      expect(dA).toBeLessThanOrEqual(1e-4);
      expect(dM).toBeLessThanOrEqual(1e-4);
    });
  }
});
