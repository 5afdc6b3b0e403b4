/**
 * A Hugging Face run whose rollouts are sampled on onnxruntime (compute.rolloutEngine = onnxruntime: the model's ONNX
 * export with a KV cache, re-exported after every update) against the same run sampled by the tfjs KV-cache engine,
 * through the production training job (setupCompute → runTraining) on the Transformers-made tiny Qwen3 checkpoint
 * (tests/support/hfCheckpoints.ts), LoRA, SAMPO on Sokoban, 3 steps on tfjs-wasm:
 *   - the run records onnxruntime as its rollout engine;
 *   - mismatch/* (behaviour log-probs of the sampling engine against the trainer's recomputation) stays at float32
 *     rounding on every step, i.e. the export follows the adapters as they train (measured: ≤ 4.5e-6; without the
 *     refresh after each update, steps 2 and 3 gave 4.8e-3 and 5.6e-3);
 *   - the first step samples the same tokens as the tfjs engine from the same seed (equal logits, one draw per token),
 *     so its rollout metrics are equal.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../core/config/index';
import type { MetricRecord } from '../../../shared/metrics';
import { hfTestCheckpoints } from '../../../../tests/support/hfCheckpoints';
import { runJob } from '../../sessions/jobRunner';
import { trainingJob } from '../../sessions/jobs/training';
import type { WorkerToHost } from '../../sessions/protocol';

let root = '';
let work = '';
beforeAll(() => {
  root = hfTestCheckpoints();
  work = mkdtempSync(join(tmpdir(), 'arlarena-hf-ort-'));
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function train(
  engine: 'onnxruntime' | 'tfjs',
): Promise<{ done: WorkerToHost; steps: Map<number, Record<string, number>>; messages: string[] }> {
  const { config, issues } = resolveConfig('sampo', 'sokoban', {
    'model.source': `hf:${join(root, 'qwen3-fp16')}`,
    'model.lora.rank': 4,
    'model.lora.alpha': 8,
    'model.lora.dropout': 0,
    'model.lora.targets': 'q_proj+v_proj+down_proj',
    'model.maxSeqLen': 512,
    'compute.backend': 'wasm',
    'compute.rolloutEngine': engine,
    'compute.logProbEngine': 'trainer',
    'compute.refLogProbEngine': 'trainer',
    'compute.workers': 1,
    'warmStart.source': 'none',
    'training.steps': 3,
    'training.validateEvery': 0,
    'training.checkpointEvery': 0,
    'rollout.tasksPerStep': 2,
    'rollout.groupSize': 2,
    'env.maxSteps': 2,
    'rollout.maxResponseTokens': 16,
    'optim.miniBatchRows': 8,
  });
  expect(issues).toEqual([]);
  const steps = new Map<number, Record<string, number>>();
  const messages: string[] = [];
  const runDir = join(work, engine);
  mkdirSync(runDir);
  const done = await runJob({
    start: {
      type: 'start',
      runId: engine,
      runDir,
      dataDir: work,
      config: config as unknown as Record<string, unknown>,
      seed: 5,
      resume: false,
    },
    job: trainingJob,
    post: (m) => {
      if (m.type === 'metrics') for (const r of m.records as MetricRecord[]) steps.set(r.step, { ...steps.get(r.step), ...r.values });
      if (m.type === 'status' && m.message) messages.push(m.message);
    },
  });
  return { done, steps, messages };
}

const perf = (r: { steps: Map<number, Record<string, number>> }): string =>
  [1, 2, 3].map((s) => `${r.steps.get(s)!['perf/rollout_s'].toFixed(2)} + ${r.steps.get(s)!['perf/update_s'].toFixed(2)} s`).join(', ');

describe('an HF run with onnxruntime rollouts', () => {
  it('samples on the export, keeps mismatch/* at float32 rounding through the updates, and draws what tfjs draws', async () => {
    const ort = await train('onnxruntime');
    const tfjs = await train('tfjs');
    for (const r of [ort, tfjs]) expect(r.done, JSON.stringify(r.done)).toMatchObject({ type: 'done', status: 'completed', step: 3 });
    expect(ort.done).toMatchObject({ backend: { rollout: expect.stringMatching(/^onnxruntime-cpu/) } });
    expect(ort.messages.filter((m) => m.startsWith('rollouts on tfjs'))).toEqual([]);
    const mm = [1, 2, 3].map((s) => ort.steps.get(s)!['mismatch/logprob_abs_max']);
    const mmTfjs = [1, 2, 3].map((s) => tfjs.steps.get(s)!['mismatch/logprob_abs_max']);
    console.log(
      `mismatch/logprob_abs_max per step: onnxruntime ${mm.map((v) => v.toExponential(2)).join(', ')}; tfjs ${mmTfjs
        .map((v) => v.toExponential(2))
        .join(
          ', ',
        )}; perf/rollout_s + perf/update_s (the update includes the re-export) per step: onnxruntime ${perf(ort)}; tfjs ${perf(tfjs)}`,
    );
    for (const v of mm) {
      expect(Number.isFinite(v)).toBe(true);
      expect(v).toBeLessThanOrEqual(1e-4);
    }
    // The adapters did move (B starts at zero), so steps 2 and 3 sampled from an export refreshed after an update.
    expect(ort.steps.get(1)!['actor/grad_norm']).toBeGreaterThan(0);
    for (const k of ['response_length/mean', 'episode/reward_mean', 'episode/score_mean']) {
      expect(ort.steps.get(1)![k], k).toBeDefined();
      expect(ort.steps.get(1)![k], k).toBe(tfjs.steps.get(1)![k]);
    }
  }, 600_000);
});
