/**
 * A Hugging Face run names its model from the start: the production training job (jobs/training.ts) reports
 * RunRecord.model as soon as it has read and hashed the folder, before any step, so a run that fails later (here:
 * its first report cannot be delivered) still has it. Tiny Qwen3 written by Transformers (tests/support/qwen3Native.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveConfig } from '../src/core/config/index';
import { runJob } from '../src/main/sessions/jobRunner';
import { trainingJob } from '../src/main/sessions/jobs/training';
import type { WorkerToHost } from '../src/main/sessions/protocol';
import { RunFiles } from '../src/main/store/runFiles';
import { qwen3NativeCheckpoint } from './support/qwen3Native';

let qwen3: string;
let dir: string;
beforeAll(async () => {
  qwen3 = qwen3NativeCheckpoint();
  dir = await mkdtemp(join(tmpdir(), 'arl-hfearly-'));
  await RunFiles.ensureDir(dir);
}, 300_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('reports the model once the folder is read; a run that fails before its end keeps it', async () => {
  const { config, issues } = resolveConfig('sampo', 'sokoban', {
    'model.source': `hf:${qwen3}`,
    'model.maxSeqLen': 512,
    'model.lora.rank': 4,
    'model.lora.alpha': 8,
    'model.lora.targets': 'q_proj+v_proj',
    'compute.backend': 'wasm',
    'compute.rolloutEngine': 'tfjs',
    'compute.logProbEngine': 'trainer',
    'compute.refLogProbEngine': 'trainer',
    'compute.workers': 1,
    'warmStart.source': 'none',
    'training.steps': 2,
  });
  expect(issues).toEqual([]);
  const posted: WorkerToHost[] = [];
  const res = await runJob({
    start: {
      type: 'start',
      runId: 'r1',
      runDir: dir,
      dataDir: dir,
      config: config as unknown as Record<string, unknown>,
      seed: 7,
      resume: false,
    },
    job: trainingJob,
    post: (m) => {
      posted.push(m);
      // The run's first progress report fails: the job ends before any step, without a `done`.
      if (m.type === 'metrics' || m.type === 'status') throw new Error('the host went away');
    },
  });
  expect(res).toMatchObject({ type: 'failed', error: 'the host went away' });
  const model = posted.find((m) => m.type === 'model');
  expect(model, posted.map((m) => m.type).join(', ')).toBeDefined();
  if (model?.type !== 'model') return;
  expect(model.model).toMatchObject({
    path: qwen3,
    architecture: 'Qwen3ForCausalLM',
    lora: { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj'] },
  });
  expect(Object.values(model.model.weights)[0]).toMatch(/^[0-9a-f]{64}$/);
  expect(model.model.config.max_position_embeddings).toBeTypeOf('number');
  // Sent before anything that can fail after the folder is read.
  expect(posted.findIndex((m) => m.type === 'model')).toBeLessThan(posted.findIndex((m) => m.type === 'metrics' || m.type === 'status'));
}, 300_000);
