/**
 * Native TensorFlow on an NVIDIA GPU (`npm run setup:tensorflow -- --gpu`: PyPI's tensorflow wheel, its and-cuda
 * NVIDIA wheels, tfjs-node-gpu's binding built against them).
 * - On a machine with a GPU: training runs on it (isUsingGpuDevice), the backend record names the GPU, every step
 *   logs perf/max_memory_allocated_gb, and two identical runs are bit-identical.
 * - On a machine without one: the GPU test is reported as skipped with "NOT RUN: no NVIDIA GPU" in its name (it
 *   needs the hardware; nothing is faked), and a run asking for compute.backend = tensorflow-gpu is refused before
 *   any run record exists, with the reason.
 * Not yet run on a GPU machine (docs/guides/native-tensorflow.md).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import type { TrainerDeps } from '../src/core/training/types';
import { initBackend, nvidiaGpuPresent, setupCompute } from '../src/main/compute/index';
import { detectComputeBackend } from '../src/main/compute/detect';
import { RunStore } from '../src/main/store/runStore';
import { SessionManager } from '../src/main/sessions/sessionManager';
import { deterministicPart, fakeClock, recorder, tinyConfig } from './tinyTrainer';

const gpu = nvidiaGpuPresent();

describe('native TensorFlow on an NVIDIA GPU', () => {
  it.skipIf(!gpu)(
    `trains on the GPU, records it, logs perf/max_memory_allocated_gb every step, bit-identical when repeated${gpu ? '' : ' — NOT RUN: no NVIDIA GPU on this machine'}`,
    async () => {
      const c = await setupCompute({ backend: 'tensorflow-gpu', rolloutEngine: 'tfjs' });
      expect(c.info.training).toBe('tensorflow-gpu');
      expect(c.info.tensorflow?.gpu).toBeTruthy();
      expect(c.info.detail).toMatch(/tfjs-node-gpu \(libtensorflow 2\.21\.0, GPU /);
      expect(c.memoryGb).toBeDefined();
      const deps = (): TrainerDeps => ({ clock: fakeClock(), compute: { info: c.info, memoryGb: c.memoryGb } });
      const cfg = tinyConfig('grpo', { 'compute.backend': 'tensorflow-gpu', 'training.steps': 2 });
      const a = recorder();
      const b = recorder();
      const ra = await runTraining(cfg, deps(), a.hooks);
      const rb = await runTraining(cfg, deps(), b.hooks);
      for (const m of a.rec.metrics) expect(m.values['perf/max_memory_allocated_gb'], `step ${m.step}`).toBeGreaterThan(0);
      expect(deterministicPart(b.rec.metrics)).toEqual(deterministicPart(a.rec.metrics));
      expect(rb.checkpoint.files['policy.bin']).toEqual(ra.checkpoint.files['policy.bin']);
      await initBackend('wasm');
    },
    600_000,
  );

  it.runIf(!gpu)('without a GPU: compute.backend = tensorflow-gpu is refused before a run record exists, with the reason', async () => {
    const probe = detectComputeBackend();
    expect(probe.available).not.toContain('tensorflow-gpu');
    const dir = await mkdtemp(join(tmpdir(), 'arl-gpu-'));
    const store = await RunStore.open(dir);
    try {
      const mgr = new SessionManager({ store });
      const e = await mgr
        .startNew({ preset: 'grpo', env: 'sokoban', seed: 1, totalSteps: 2, config: { compute: { backend: 'tensorflow-gpu' } } })
        .catch((x: unknown) => x);
      expect((e as Error).message).toMatch(
        /compute\.backend = "tensorflow-gpu" is not available on this machine \(.*(no NVIDIA GPU on this machine|tfjs-node-gpu installed without its native binding).*\).*no run was created/,
      );
      expect(await store.listRuns()).toEqual([]);
      await mgr.dispose();
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
    await expect(initBackend('tensorflow-gpu')).rejects.toThrow(/no NVIDIA GPU on this machine/);
  });
});
