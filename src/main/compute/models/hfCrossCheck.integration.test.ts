/**
 * The lab's tfjs Qwen2 / Qwen3 / Llama against Hugging Face Transformers on checkpoints made by Transformers itself
 * (tests/support/hfCheckpoints.ts): logits of right- and left-padded batches and response-token log-probs
 * (max |Δ| ≤ 1e-4, float32), the gradient of a token-mean loss w.r.t. several weights (relative L2 error ≤ 1e-3), and
 * 32 greedy tokens with the KV cache (identical), on tfjs-wasm and tfjs-cpu, or on tfjs-node with
 * ARLARENA_TEST_BACKEND=tensorflow (built by `npm run setup:tensorflow`). Needs the `llm` peer venv (bash scripts/setup.sh).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { HfCausalLM } from '../../../core/llm/causalLm';
import { generateLlm } from '../../../core/llm/generate';
import { Rng } from '../../../core/util/rng';
import { initBackend } from '../backends';
import { HF_TEST_MODELS, hfTestCheckpoints } from '../../../../tests/support/hfCheckpoints';
import { maxLogitDiff, pack, qwen3PeerAnswer } from '../../../../tests/support/hfReference';
import { LoraAdapters } from '../../../core/llm/lora';
import { loadHfFolder, loadPeftAdapter } from './hfFolder';

interface Reference {
  rows: Array<{ promptIds: number[]; responseIds: number[] }>;
  padId: number;
  logits: number[][][];
  tokenLogProbs: number[][];
  loss: number;
  grads: Record<string, { shape: number[]; values: number[] }>;
  leftPadded: { prompts: number[][]; logits: number[][][] };
  greedy: { prompts: number[][]; tokens: number[][] };
  lora: { tokenLogProbs: number[][]; loss: number; grads: Record<string, { shape: number[]; values: number[] }> };
}

function relErr(g: ArrayLike<number>, r: number[]): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < r.length; i++) {
    num += (g[i] - r[i]) ** 2;
    den += r[i] ** 2;
  }
  return Math.sqrt(num / den);
}

/**
 * The token-mean loss of `rows` (every response token of the batch weighs the same) and its gradients w.r.t. `vars`
 * (default: every trainable variable), and the largest gap of the rows' token log-probs to `refLogProbs` when given.
 * The caller disposes `value` and `grads`.
 */
function tokenMeanLoss(
  model: HfCausalLM,
  rows: Reference['rows'],
  refLogProbs?: number[][],
  vars?: tf.Variable[],
): { value: tf.Scalar; grads: tf.NamedTensorMap; loss: number; dLogp: number } {
  let dLogp = 0;
  const { value, grads } = tf.variableGrads(() => {
    const o = model.tokenLogProbs(rows);
    if (refLogProbs) {
      const lp = o.logProbs.arraySync();
      rows.forEach((r, i) =>
        r.responseIds.forEach((_, j) => {
          dLogp = Math.max(dLogp, Math.abs(lp[i][j] - refLogProbs[i][j]));
        }),
      );
    }
    return tf.div(tf.neg(tf.sum(o.logProbs)), tf.sum(o.mask)) as tf.Scalar;
  }, vars);
  return { value, grads, loss: value.dataSync()[0], dLogp };
}

/** 32 greedy tokens after each prompt through the lab's KV cache. */
const greedy32 = (model: HfCausalLM, prompts: number[][], padId: number) =>
  generateLlm(model, prompts, { maxNewTokens: 32, temperature: 0, topP: 1, topK: 0, stopIds: [] }, new Rng(7), padId);

let root = '';
beforeAll(() => {
  root = hfTestCheckpoints();
}, 300_000);

/** tfjs-wasm and the pure-JS cpu backend; ARLARENA_TEST_BACKEND=tensorflow runs them on tfjs-node instead (as the trainer tests). */
const BACKENDS = process.env.ARLARENA_TEST_BACKEND === 'tensorflow' ? (['tensorflow'] as const) : (['wasm', 'cpu'] as const);

for (const backend of BACKENDS) {
  describe(`HfCausalLM vs Transformers 4.44.2 on tfjs-${backend}`, () => {
    beforeAll(async () => {
      await initBackend(backend);
    });

    for (const name of HF_TEST_MODELS) {
      it(`${name}: logits, log-probs, gradients and greedy tokens match`, async () => {
        const folder = await loadHfFolder(join(root, name));
        const ref = JSON.parse(readFileSync(join(root, name, 'reference.json'), 'utf8')) as Reference;
        const model = HfCausalLM.fromTensors(folder.config, folder.tensors);
        const V = folder.config.vocabSize;
        try {
          const right = pack(
            ref.rows.map((r) => [...r.promptIds, ...r.responseIds]),
            ref.padId,
            false,
          );
          const lg = model.forward(right.ids, ref.rows.length, right.T, right.mask);
          const dRight = maxLogitDiff(lg.dataSync() as Float32Array, V, ref.logits, right.at);
          lg.dispose();

          const left = pack(ref.leftPadded.prompts, ref.padId, true);
          const lg2 = model.forward(left.ids, ref.leftPadded.prompts.length, left.T, left.mask);
          const dLeft = maxLogitDiff(lg2.dataSync() as Float32Array, V, ref.leftPadded.logits, left.at);
          lg2.dispose();

          const names = Object.keys(ref.grads);
          const { value, grads, loss, dLogp } = tokenMeanLoss(
            model,
            ref.rows,
            ref.tokenLogProbs,
            names.map((n) => model.vars[n]),
          );
          const rel: Record<string, number> = {};
          for (const n of names) {
            const g = grads[model.vars[n].name].dataSync();
            expect(g.length).toBe(ref.grads[n].values.length);
            rel[n] = relErr(g, ref.grads[n].values);
          }
          tf.dispose([value, ...Object.values(grads)]);

          const gen = await greedy32(model, ref.greedy.prompts, ref.padId);
          console.log(
            `${backend} ${name}: max|Δ| logits ${dRight.toExponential(2)} (left-padded ${dLeft.toExponential(2)}), log-probs ${dLogp.toExponential(2)}, loss ${loss} vs ${ref.loss}, grad rel err max ${Math.max(...Object.values(rel)).toExponential(2)}`,
          );
          expect(dRight).toBeLessThanOrEqual(1e-4);
          expect(dLeft).toBeLessThanOrEqual(1e-4);
          expect(dLogp).toBeLessThanOrEqual(1e-4);
          expect(Math.abs(loss - ref.loss)).toBeLessThanOrEqual(1e-4);
          for (const [n, e] of Object.entries(rel)) expect(e, n).toBeLessThanOrEqual(1e-3);
          expect(gen.tokens).toEqual(ref.greedy.tokens);
          expect(gen.finish).toEqual(ref.greedy.tokens.map(() => 'length'));
        } finally {
          model.dispose();
        }
      });

      it(`${name}: PEFT LoRA adapters load, and log-probs and adapter gradients match PEFT's with the base frozen`, async () => {
        const folder = await loadHfFolder(join(root, name));
        const ref = JSON.parse(readFileSync(join(root, name, 'reference.json'), 'utf8')) as Reference;
        const model = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: false });
        const peft = await loadPeftAdapter(join(root, name, 'lora'));
        const lora = LoraAdapters.fromTensors(model, peft.settings, peft.tensors);
        lora.attach(model);
        try {
          const names = Object.keys(ref.lora.grads);
          // Gradients w.r.t. every trainable variable: only the adapters are trainable.
          const { value, grads, loss, dLogp } = tokenMeanLoss(model, ref.rows, ref.lora.tokenLogProbs);
          const trained = Object.keys(grads).filter((k) => k.startsWith(`${model.name}/`));
          expect(trained.sort()).toEqual(
            lora
              .trainableVariables()
              .map((v) => v.name)
              .sort(),
          );
          const rel = Object.fromEntries(names.map((n) => [n, relErr(grads[lora.vars[n].name].dataSync(), ref.lora.grads[n].values)]));
          tf.dispose([value, ...Object.values(grads)]);
          console.log(
            `${backend} ${name} LoRA r=${peft.settings.rank}: max|Δ| log-probs ${dLogp.toExponential(2)}, loss ${loss} vs ${ref.lora.loss}, adapter grad rel err max ${Math.max(...Object.values(rel)).toExponential(2)}`,
          );
          expect(dLogp).toBeLessThanOrEqual(1e-4);
          for (const [n, e] of Object.entries(rel)) expect(e, n).toBeLessThanOrEqual(1e-3);
        } finally {
          lora.dispose();
          model.dispose();
        }
      });
    }
  });
}

describe(`qwen3-fp16 vs Transformers 4.51.3's own Qwen3ForCausalLM (tfjs-${BACKENDS[0]})`, () => {
  // The Qwen3 checkpoint above is made by Transformers 4.44 with a Qwen3-style attention (see make_hf_checkpoints.py);
  // this checks the lab against Transformers' Qwen3 class itself (tests/peers/qwen3_transformers.py, llm-qwen3 venv).
  it('logits of the padded reference rows, the token-mean loss gradient, 32 greedy tokens and the PEFT adapter match', async () => {
    await initBackend(BACKENDS[0]);
    const dir = join(root, 'qwen3-fp16');
    const ref = JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')) as Reference;
    const peer = qwen3PeerAnswer<{
      transformers: string;
      logits: number[][][];
      loss: number;
      grads: Record<string, number[]>;
      greedy: number[][];
      lora: { tokenLogProbs: number[][]; loss: number; grads: Record<string, number[]> };
    }>(dir);
    expect(peer.transformers).toBe('4.51.3');
    const folder = await loadHfFolder(dir);
    const model = HfCausalLM.fromTensors(folder.config, folder.tensors);
    try {
      const right = pack(
        ref.rows.map((r) => [...r.promptIds, ...r.responseIds]),
        ref.padId,
        false,
      );
      const lg = model.forward(right.ids, ref.rows.length, right.T, right.mask);
      const dLogits = maxLogitDiff(lg.dataSync() as Float32Array, folder.config.vocabSize, peer.logits, right.at);
      lg.dispose();
      const names = Object.keys(peer.grads);
      const { value, grads, loss } = tokenMeanLoss(
        model,
        ref.rows,
        undefined,
        names.map((n) => model.vars[n]),
      );
      const rel = Object.fromEntries(names.map((n) => [n, relErr(grads[model.vars[n].name].dataSync(), peer.grads[n])]));
      tf.dispose([value, ...Object.values(grads)]);
      // Greedy decoding with the lab's KV cache against Qwen3ForCausalLM's own (DynamicCache), prompt by prompt.
      const gen = await greedy32(model, ref.greedy.prompts, ref.padId);
      console.log(
        `qwen3-fp16 vs Qwen3ForCausalLM 4.51.3: max|Δ| logits ${dLogits.toExponential(2)}, loss ${loss} vs ${peer.loss}, grad rel err max ${Math.max(...Object.values(rel)).toExponential(2)}, greedy ${peer.greedy.length} × 32 tokens`,
      );
      expect(dLogits).toBeLessThanOrEqual(1e-4);
      expect(Math.abs(loss - peer.loss)).toBeLessThanOrEqual(1e-4);
      for (const [n, e] of Object.entries(rel)) expect(e, n).toBeLessThanOrEqual(1e-3);
      expect(peer.greedy.map((t) => t.length)).toEqual(ref.greedy.prompts.map(() => 32));
      expect(gen.tokens).toEqual(peer.greedy);
    } finally {
      model.dispose();
    }

    // The folder's PEFT adapter on the class (applied as PEFT computes it; the peer says how) against the lab's LoRA.
    const frozen = HfCausalLM.fromTensors(folder.config, folder.tensors, { trainable: false });
    const peft = await loadPeftAdapter(join(dir, 'lora'));
    const lora = LoraAdapters.fromTensors(frozen, peft.settings, peft.tensors);
    lora.attach(frozen);
    try {
      const { value, grads, loss, dLogp } = tokenMeanLoss(frozen, ref.rows, peer.lora.tokenLogProbs);
      const names = Object.keys(peer.lora.grads);
      expect(names.length).toBeGreaterThan(0);
      const rel = Object.fromEntries(names.map((n) => [n, relErr(grads[lora.vars[n].name].dataSync(), peer.lora.grads[n])]));
      tf.dispose([value, ...Object.values(grads)]);
      console.log(
        `qwen3-fp16 LoRA r=${peft.settings.rank} vs Qwen3ForCausalLM 4.51.3: max|Δ| log-probs ${dLogp.toExponential(2)}, loss ${loss} vs ${peer.lora.loss}, adapter grad rel err max ${Math.max(...Object.values(rel)).toExponential(2)}`,
      );
      expect(dLogp).toBeLessThanOrEqual(1e-4);
      expect(Math.abs(loss - peer.lora.loss)).toBeLessThanOrEqual(1e-4);
      for (const [n, e] of Object.entries(rel)) expect(e, n).toBeLessThanOrEqual(1e-3);
    } finally {
      lora.dispose();
      frozen.dispose();
    }
  });
});

describe('tokenizer and chat template vs Transformers 4.44.2 / tokenizers 0.19.1', () => {
  for (const name of ['chatml', 'llama'] as const) {
    it(`${name}: ids, decodes and rendered chats identical on ${'>'}300 strings`, async () => {
      const { HfTokenizer } = await import('../../../core/llm/tokenizer');
      const dir = join(root, 'tokenizers', name);
      const tok = new HfTokenizer(
        JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')),
        JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')),
      );
      const ref = JSON.parse(readFileSync(join(root, 'tokenizer_reference.json'), 'utf8'))[name] as {
        strings: Array<{ text: string; ids: number[]; idsWithSpecial: number[]; decoded: string; decodedSkip: string }>;
        chats: Array<{
          messages: Array<{ role: string; content: string }>;
          addGenerationPrompt: boolean;
          variables?: Record<string, unknown>;
          text: string;
          ids: number[];
        }>;
      };
      expect(ref.strings.length).toBeGreaterThan(300);
      const mismatches: string[] = [];
      for (const s of ref.strings) {
        if (JSON.stringify(tok.encode(s.text)) !== JSON.stringify(s.ids)) mismatches.push(`encode ${JSON.stringify(s.text)}`);
        if (JSON.stringify(tok.encode(s.text, { addSpecialTokens: true })) !== JSON.stringify(s.idsWithSpecial))
          mismatches.push(`encode+special ${JSON.stringify(s.text)}`);
        if (tok.decode(s.ids) !== s.decoded) mismatches.push(`decode ${JSON.stringify(s.text)}`);
        if (tok.decode(s.ids, { skipSpecialTokens: true }) !== s.decodedSkip) mismatches.push(`decode(skip) ${JSON.stringify(s.text)}`);
      }
      for (const c of ref.chats) {
        const o = { addGenerationPrompt: c.addGenerationPrompt, variables: c.variables };
        if (tok.renderChat(c.messages, o) !== c.text)
          mismatches.push(`chat text ${JSON.stringify(c.messages)} ${JSON.stringify(c.variables ?? {})}`);
        if (JSON.stringify(tok.applyChatTemplate(c.messages, o)) !== JSON.stringify(c.ids))
          mismatches.push(`chat ids ${JSON.stringify(c.messages)} ${JSON.stringify(c.variables ?? {})}`);
      }
      expect(ref.chats.some((c) => c.variables)).toBe(true);
      expect(mismatches).toEqual([]);
    });
  }
});
