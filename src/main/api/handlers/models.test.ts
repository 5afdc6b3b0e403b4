/**
 * models.inspect and models.folders through the real router (input and output checked against the contract), on
 * model folders written by the test kit (src/main/testing/hfFolder.ts): the lab's own safetensors writer and a
 * hand-written byte-level BPE tokenizer (the e2e spec ui-hf-newrun.spec.ts uses a folder written by Transformers itself).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LORA_TARGET_MODULES } from '../../../shared/models';
import { llmParamCount, parseLlmConfig } from '../../../core/llm/config';
import { LORA_TARGETS, loraParamCount, parseLoraSpec } from '../../../core/llm/lora';
import { estimateLlmMemory } from '../../../core/llm/memory';
import { rowActivationBytes } from '../../../core/training/chunking';
import { TINY_QWEN2_CONFIG, writeHfFolder } from '../../testing/hfFolder';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import type { CallContext } from '../types';
import { createModelsHandlers } from './models';
import { createPickHandlers } from './namedFile';

const GiB = 2 ** 30;
const configJson = TINY_QWEN2_CONFIG;

let root = '';
let outside = '';
let model = '';
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'arlarena-models-api-'));
  outside = mkdtempSync(join(tmpdir(), 'arlarena-models-outside-'));
  model = join(root, 'models', 'tiny-qwen2');
  mkdirSync(model, { recursive: true });
  writeHfFolder(model);
  // A folder that is no model (no config.json), and a copy of the model outside the allowed root.
  mkdirSync(join(root, 'models', 'notes'), { recursive: true });
  writeFileSync(join(root, 'models', 'notes', 'README.md'), 'not a model');
  mkdirSync(join(outside, 'm'));
  writeFileSync(join(outside, 'm', 'config.json'), JSON.stringify(configJson));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

let lab: HandlerTestLab;
async function open(ctx: CallContext, totalBytes = 16 * GiB): Promise<HandlerTestLab> {
  lab = await openHandlerTestLab(
    'arl-models-api-',
    (s) => ({ ...createModelsHandlers(s, { memory: () => ({ totalBytes, freeBytes: totalBytes / 2 }) }), ...createPickHandlers() }),
    ctx,
  );
  return lab;
}
afterEach(async () => {
  await lab?.close();
});
const browser = (): CallContext => ({ transport: 'browser', publishDownload: null, importRoots: [root] });

describe('models.inspect', () => {
  it('reads the folder without its weights: architecture, parameters, the LoRA trainable count, and the estimate against the machine', async () => {
    await open(browser());
    const r = await lab.call('models.inspect', { path: model, lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] } });
    expect(r.ok).toBe(true);
    const cfg = parseLlmConfig(configJson);
    const lora = { ...parseLoraSpec('r=4,alpha=8,targets=q_proj+v_proj') };
    const work = { rows: 1, seqLen: 32, responseTokens: 31 };
    // No run given: one row of the model's whole context (at most 2048 tokens), no frozen π_ref copy.
    const est = estimateLlmMemory(cfg, work, lora);
    expect(r.value).toMatchObject({
      dir: model,
      architecture: 'Qwen2ForCausalLM',
      layers: 1,
      hiddenSize: 16,
      heads: 2,
      kvHeads: 1,
      headDim: 8,
      maxPositions: 32,
      vocabSize: 12,
      dtypes: ['F32'],
      weightFiles: 1,
      chatTemplate: true,
      params: llmParamCount(cfg),
      trainableParams: loraParamCount(cfg, lora),
      lora: { rank: 4, alpha: 8, dropout: 0.05, targetModules: ['q_proj', 'v_proj'] },
      work: { ...work, refCopy: false },
      memory: {
        weightsBytes: est.weightsBytes,
        trainingStateBytes: est.trainingStateBytes,
        activationBytes: est.activationBytes,
        totalBytes: est.totalBytes,
      },
      // The test lab trains on tfjs-wasm: the 4 GiB heap is the limit on a 16 GiB machine.
      machine: { totalBytes: 16 * GiB, freeBytes: 8 * GiB, backend: 'wasm', budgetBytes: 0.8 * 2 ** 32, limitedBy: 'wasm-heap' },
      fits: true,
    });
    expect(r.value.trainableParams).toBe(1 * 4 * (16 + 16) + 1 * 4 * (16 + 8));
    expect(r.value.verdict).toMatch(/^fits: needs weights .* within 3\.20 GiB \(80 % of tfjs-wasm's 4 GiB heap/);
    // Full fine-tuning: every weight trainable.
    const full = await lab.call('models.inspect', { path: model, lora: null, seqLen: 16, responseTokens: 4, rows: 2 });
    expect(full.value).toMatchObject({
      lora: null,
      trainableParams: llmParamCount(cfg),
      work: { rows: 2, seqLen: 16, responseTokens: 4, refCopy: false },
    });
  });

  it('estimates for the run New run would start: its mini-batch and activation budget give the rows, its KL term the π_ref copy', async () => {
    await open(browser());
    const cfg = parseLlmConfig(configJson);
    const run = { preset: 'grpo', env: 'sokoban', overrides: { 'optim.miniBatchRows': 5 } };
    const r = await lab.call('models.inspect', { path: model, run, responseTokens: 8 });
    expect(r.value.work).toEqual({ rows: 5, seqLen: 32, responseTokens: 8, refCopy: true });
    const est = estimateLlmMemory(cfg, { rows: 5, seqLen: 32, responseTokens: 8 }, null);
    expect(r.value.memory).toEqual({
      weightsBytes: 2 * est.weightsBytes,
      trainingStateBytes: est.trainingStateBytes,
      activationBytes: est.activationBytes,
      totalBytes: est.totalBytes + est.weightsBytes,
    });
    // The activation budget caps the rows a chunk holds: 1 MiB over ≈ 103 KiB per 32-token row of this model.
    const shape = { nLayers: 1, nHeads: 2, dModel: 16, dFF: 24, vocabSize: 12 };
    expect(rowActivationBytes(shape, 32)).toBe(105_472);
    const capped = await lab.call('models.inspect', {
      path: model,
      run: { ...run, overrides: { 'compute.activationBudgetMB': 1 } },
      responseTokens: 8,
    });
    expect(capped.value.work.rows).toBe(9);
    // LoRA bypasses its adapters for π_ref: no copy. Without responseTokens the run's rollout.maxResponseTokens is used.
    const lora = await lab.call('models.inspect', {
      path: model,
      run: { ...run, overrides: { 'optim.miniBatchRows': 5, 'rollout.maxResponseTokens': 8 } },
      lora: { rank: 4, alpha: 8 },
    });
    expect(lora.value.work).toEqual({ rows: 5, seqLen: 32, responseTokens: 8, refCopy: false });
    expect(lora.error).toBeUndefined();
  });

  it('refuses a run config that does not resolve, naming the field', async () => {
    await open(browser());
    expect((await lab.call('models.inspect', { path: model, run: { preset: 'nope', env: 'sokoban' } })).error).toMatchObject({
      code: 'VALIDATION',
      field: 'run.preset',
    });
    expect(
      (await lab.call('models.inspect', { path: model, run: { preset: 'grpo', env: 'sokoban', overrides: { 'optim.miniBatchRows': 0 } } }))
        .error,
    ).toMatchObject({ code: 'VALIDATION', field: 'run.overrides.optim.miniBatchRows' });
  });

  it('refuses a run that will not fit, with the estimate and what to change in one line', async () => {
    await open(browser(), 2 * GiB);
    const r = await lab.call('models.inspect', { path: model, rows: 65_536 });
    expect(r.ok).toBe(true);
    expect(r.value.fits).toBe(false);
    expect(r.value.machine).toMatchObject({ limitedBy: 'machine', budgetBytes: 0.8 * 2 * GiB });
    expect(r.value.memory.totalBytes).toBeGreaterThan(r.value.machine.budgetBytes);
    expect(r.value.verdict).toMatch(
      /^does not fit: needs weights .* = \d+\.\d\d GiB, over 1\.60 GiB \(80 % of this machine's 2\.00 GiB\); .*fewer rows per chunk/,
    );
    expect(r.value.verdict).not.toMatch(/\n/);
  });

  it('in browser mode reads only inside the --allow-dir folders, with the same answer whether or not the path exists', async () => {
    await open(browser());
    const a = await lab.call('models.inspect', { path: join(outside, 'm') });
    const b = await lab.call('models.inspect', { path: join(outside, 'nothing-here') });
    for (const [r, p] of [
      [a, join(outside, 'm')],
      [b, join(outside, 'nothing-here')],
    ] as const) {
      expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION', field: 'path' } });
      expect(r.error.message).toBe(
        `in browser mode the lab reads model folders by path only inside ${JSON.stringify(root)}; ${JSON.stringify(p)} is not one of them`,
      );
    }
    expect((await lab.call('models.inspect', { path: 'models/tiny-qwen2' })).error).toMatchObject({
      code: 'VALIDATION',
      field: 'path',
      message: expect.stringMatching(/is not absolute/),
    });
  });

  it('refuses what is no model folder, a context past the model and bad LoRA settings, naming the field', async () => {
    await open(browser());
    const notes = await lab.call('models.inspect', { path: join(root, 'models', 'notes') });
    expect(notes.error).toMatchObject({
      code: 'VALIDATION',
      field: 'path',
      message: expect.stringMatching(/has no config\.json — not a Hugging Face model folder/),
    });
    expect(notes.error.message).not.toMatch(/\n/);
    expect((await lab.call('models.inspect', { path: model, seqLen: 64 })).error).toMatchObject({
      field: 'seqLen',
      message: "seqLen 64 is longer than the model's context (config.json max_position_embeddings 32); use at most 32",
    });
    expect((await lab.call('models.inspect', { path: model, seqLen: 16, responseTokens: 16 })).error).toMatchObject({
      field: 'responseTokens',
    });
    expect((await lab.call('models.inspect', { path: model, lora: { rank: 0, alpha: 8 } })).error).toMatchObject({
      code: 'VALIDATION',
      field: 'lora.rank',
    });
    expect((await lab.call('models.inspect', { path: model, lora: { rank: 4, alpha: 8, targetModules: ['x_proj'] } })).error).toMatchObject(
      {
        code: 'VALIDATION',
        field: 'lora.targetModules.0',
      },
    );
    expect(
      (await lab.call('models.inspect', { path: model, lora: { rank: 4, alpha: 8, targetModules: ['q_proj', 'q_proj'] } })).error,
    ).toMatchObject({
      field: 'lora.targetModules',
    });
    expect((await lab.call('models.inspect', { path: model, rows: 0 })).error).toMatchObject({ field: 'rows' });
  });
});

describe('models.inspect in the desktop app', () => {
  it('names the folder only by the grant its dialog answered: a path from the window, or a grant it never gave, is refused', async () => {
    const grant = 'g'.repeat(24);
    const asked: unknown[] = [];
    const pathGrants = {
      pick: async (request: unknown) => {
        asked.push(request);
        return { grant, path: model };
      },
      path: (g: string) => (g === grant ? model : null),
    };
    await open({ transport: 'electron', publishDownload: null, pathGrants });
    expect(await lab.call('imports.pick', { kind: 'folder', purpose: 'model' })).toEqual({ ok: true, value: { grant, path: model } });
    expect(asked).toEqual([{ kind: 'folder', purpose: 'model' }]);
    const r = await lab.call('models.inspect', { grant, lora: { rank: 4, alpha: 8 } });
    expect(r.value).toMatchObject({ dir: model, architecture: 'Qwen2ForCausalLM', fits: true });
    expect((await lab.call('models.inspect', { path: model })).error).toMatchObject({
      code: 'VALIDATION',
      field: 'path',
      message: expect.stringMatching(/only through its own file dialog/),
    });
    expect((await lab.call('models.inspect', { grant: 'h'.repeat(24) })).error).toMatchObject({ code: 'VALIDATION', field: 'grant' });
    expect((await lab.call('models.inspect', { path: model, grant })).error).toMatchObject({ code: 'VALIDATION', field: 'grant' });
  });

  it('in browser mode a grant is refused: there a folder is named by path', async () => {
    await open(browser());
    expect((await lab.call('models.inspect', { grant: 'g'.repeat(24) })).error).toMatchObject({ code: 'VALIDATION', field: 'grant' });
  });
});

describe('models.folders', () => {
  it('lists the model folders under the allowed roots (config.json present), with their architecture', async () => {
    await open(browser());
    const r = await lab.call('models.folders');
    expect(r.value).toEqual({
      anyPath: false,
      roots: [root],
      folders: [{ path: model, architecture: 'Qwen2ForCausalLM' }],
      truncated: false,
    });
    // No root allowed: nothing listed.
    await lab.close();
    await open({ transport: 'browser', publishDownload: null });
    expect((await lab.call('models.folders')).value).toEqual({ anyPath: false, roots: [], folders: [], truncated: false });
  });

  it('in the desktop app lists nothing: the native dialog picks the folder', async () => {
    await open({ transport: 'electron', publishDownload: null });
    expect((await lab.call('models.folders')).value).toEqual({ anyPath: true, roots: [], folders: [], truncated: false });
  });
});

it("the contract's LoRA target list is the engine's", () => {
  expect([...LORA_TARGET_MODULES]).toEqual([...LORA_TARGETS]);
});
