/**
 * One memory estimate for a Hugging Face folder, wherever it is asked: `arlarena llm inspect` (the CLI), the API's
 * models.inspect (New run's form) and the preflight that `train --model hf:` and sessions.start run (hfRunMemory).
 * models.inspect kept its own copy of the preflight's rows-per-chunk rule and π_ref copy; it now calls hfRunWork and
 * hfWorkMemory (src/main/compute/models/hfRunModel.ts), and these tests hold the three to the same bytes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/core/config/index';
import { createModelsHandlers } from '../src/main/api/handlers/models';
import llm from '../src/main/cli/commands/llm';
import { inspectHfFolder } from '../src/main/compute/models/hfFolder';
import { MEMORY_HEADROOM } from '../src/core/llm/memoryFit';
import { hfRunMemory, onnxRolloutBytes, preflightHfRun } from '../src/main/compute/models/hfRunModel';
import { TINY_QWEN2_CONFIG, writeHfFolder } from '../src/main/testing/hfFolder';
import { testCliContext } from '../src/main/testing/testContext';
import { openHandlerTestLab, type HandlerTestLab } from '../src/main/testing/testLab';

const model = mkdtempSync(join(tmpdir(), 'arl-inspect-same-'));
writeHfFolder(model, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: 64 } });
afterAll(() => rmSync(model, { recursive: true, force: true }));

let lab: HandlerTestLab | undefined;
afterEach(async () => {
  await lab?.close();
  lab = undefined;
});
const api = async (input: Record<string, unknown>) => {
  lab ??= await openHandlerTestLab('arl-inspect-same-lab-', (s) => createModelsHandlers(s), {
    transport: 'electron',
    publishDownload: null,
  });
  const r = await lab.call('models.inspect', { path: model, ...input });
  expect(r.error).toBeUndefined();
  return r.value;
};

interface Memory {
  weightsBytes: number;
  trainingStateBytes: number;
  activationBytes: number;
  totalBytes: number;
}
const bytes = (m: Memory): Memory => ({
  weightsBytes: m.weightsBytes,
  trainingStateBytes: m.trainingStateBytes,
  activationBytes: m.activationBytes,
  totalBytes: m.totalBytes,
});

async function cli(args: string[]): Promise<{ memory: Memory; work: unknown }> {
  const c = testCliContext('/nonexistent');
  await llm.run(['inspect', model, '--json', ...args], c.ctx);
  return JSON.parse(c.out()) as { memory: Memory; work: unknown };
}

describe('the memory estimate of a Hugging Face folder', () => {
  it('is the same from llm inspect and models.inspect for the same LoRA, rows, context and response', async () => {
    for (const [flags, lora] of [
      [[], null],
      [['--lora', 'r=4,alpha=8,dropout=0,targets=q_proj+v_proj'], { rank: 4, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj'] }],
    ] as const) {
      const fromCli = await cli([...flags, '--rows', '3', '--seq-len', '48', '--response-tokens', '16']);
      const fromApi = await api({ lora, rows: 3, seqLen: 48, responseTokens: 16 });
      expect(fromCli.work).toEqual({ rows: 3, seqLen: 48, responseTokens: 16 });
      expect(fromApi.work).toEqual({ rows: 3, seqLen: 48, responseTokens: 16, refCopy: false });
      expect(bytes(fromApi.memory)).toEqual(bytes(fromCli.memory));
      expect(fromApi.memory.totalBytes).toBeGreaterThan(0);
    }
  });

  it("for a run's config, models.inspect gives the preflight's estimate: its rows per chunk and π_ref's copy", async () => {
    const info = await inspectHfFolder(model);
    const works: unknown[] = [];
    const cases: Array<Record<string, number | boolean>> = [
      // A KL term on full fine-tuning: π_ref a frozen copy of the weights. A 1 MiB activation budget caps the chunk.
      { 'optim.miniBatchRows': 5 },
      { 'compute.activationBudgetMB': 1 },
      { 'algorithm.kl.enabled': false, 'algorithm.kl.inReward': false, 'optim.miniBatchRows': 7 },
    ];
    for (const overrides of cases) {
      const run = { preset: 'grpo', env: 'sokoban', overrides: { ...overrides, 'rollout.maxResponseTokens': 8 } };
      const fromApi = await api({ run, seqLen: 48 });
      const { config } = resolveConfig('grpo', 'sokoban', { ...run.overrides, 'model.maxSeqLen': 48 });
      expect(config).toBeDefined();
      expect(bytes(fromApi.memory)).toEqual(bytes(hfRunMemory(info, config!)));
      works.push(fromApi.work);
    }
    // Three different chunks, so the comparison is not of one number: the copy, the budget's cap, no copy.
    expect(works[0]).toEqual({ rows: 5, seqLen: 48, responseTokens: 8, refCopy: true });
    expect(works[1]).toMatchObject({ seqLen: 48, responseTokens: 8, refCopy: true });
    expect((works[1] as { rows: number }).rows).toBeLessThan(64);
    expect(works[2]).toEqual({ rows: 7, seqLen: 48, responseTokens: 8, refCopy: false });
    const noCopy = await api({ rows: 5, seqLen: 48, responseTokens: 8 });
    const copy = await api({
      run: { preset: 'grpo', env: 'sokoban', overrides: { 'optim.miniBatchRows': 5, 'rollout.maxResponseTokens': 8 } },
      seqLen: 48,
    });
    expect(copy.memory.weightsBytes).toBe(2 * noCopy.memory.weightsBytes);
  });

  it("for a run, models.inspect's verdict is the preflight's: onnxruntime rollouts' export counted beside the trainer", async () => {
    // A machine whose memory holds the trainer but not the trainer and the onnxruntime export (CPU rollouts, the
    // default engine): Start's preflight refuses the run, so New run's card must not say it fits.
    const info = await inspectHfFolder(model);
    const overrides = { 'rollout.maxResponseTokens': 8, 'optim.miniBatchRows': 4, 'compute.backend': 'wasm' };
    const { config, issues } = resolveConfig('grpo', 'sokoban', {
      ...overrides,
      'model.maxSeqLen': 48,
      'model.source': `hf:${model}`,
      'compute.refLogProbEngine': 'trainer',
      'warmStart.source': 'none',
    });
    expect(issues).toEqual([]);
    const est = hfRunMemory(info, config!);
    const ort = onnxRolloutBytes(info, config!, 'wasm');
    expect(ort).toBeGreaterThan(0);
    const totalBytes = Math.round((est.totalBytes + ort / 2) / MEMORY_HEADROOM);
    await expect(preflightHfRun(config!, { totalBytes, backend: 'wasm' })).rejects.toThrow(/with onnxruntime rollouts/);
    const small = await openHandlerTestLab(
      'arl-inspect-fit-lab-',
      (s) => createModelsHandlers(s, { memory: () => ({ totalBytes, freeBytes: totalBytes }) }),
      {
        transport: 'electron',
        publishDownload: null,
      },
    );
    try {
      const onnx = await small.call('models.inspect', { path: model, seqLen: 48, run: { preset: 'grpo', env: 'sokoban', overrides } });
      expect(onnx.error).toBeUndefined();
      expect(onnx.value.fits).toBe(false);
      expect(onnx.value.verdict).toMatch(/with onnxruntime's export of the weights .* does not fit/);
      // Rollouts on tfjs hold no export: the trainer alone, which fits.
      const tfjs = await small.call('models.inspect', {
        path: model,
        seqLen: 48,
        run: { preset: 'grpo', env: 'sokoban', overrides: { ...overrides, 'compute.rolloutEngine': 'tfjs' } },
      });
      expect(tfjs.value.fits).toBe(true);
    } finally {
      await small.close();
    }
  });
});
