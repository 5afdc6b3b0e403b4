/**
 * The trainer on native TensorFlow (tfjs-node built by `npm run setup:tensorflow` against PyPI's libtensorflow)
 * against tfjs-wasm, in one process (the tfjs backend is switched between runs; the config is the same, as for a
 * run made with compute.backend = auto on one machine and resumed on another):
 * - the backend record names libtensorflow's version and its threads;
 * - the same config, seed, backend and K give bit-identical runs on tfjs-node (K = 1 and K = 2 gradient workers);
 * - a first RL step on tfjs-node and on tfjs-wasm agree within float32 tolerance on every logged metric and on the
 *   updated weights;
 * - a checkpoint written on one backend resumes on the other, and the resumed step agrees with the uninterrupted run.
 * Needs the native build: without it every test fails naming `npm run setup:tensorflow` (never skipped).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { readCheckpoint } from '../src/core/training/checkpoint';
import type { TrainerDeps } from '../src/core/training/types';
import type { MetricRecord } from '../src/shared/metrics';
import { initBackend, setupCompute } from '../src/main/compute/index';
import { GradPool } from '../src/main/compute/gradPool';
import { trainingJob } from '../src/main/sessions/jobs/training';
import { ComputeBackendInfo } from '../src/shared/api';
import { deps, deterministicPart, recorder, tinyConfig } from './tinyTrainer';

async function onNative(): Promise<void> {
  const info = await initBackend('tensorflow').catch((e: Error) => {
    throw new Error(`native TensorFlow is not available (${e.message}); build it with \`npm run setup:tensorflow\``);
  });
  expect(info.training).toBe('tensorflow');
}
const onWasm = async (): Promise<void> => void (await initBackend('wasm'));

beforeAll(onNative);
afterAll(onWasm);

const BASE = { 'compute.backend': 'auto' } as const;

function poolDeps(backend: 'tensorflow' | 'wasm'): TrainerDeps {
  const base = deps();
  return { ...base, compute: { ...base.compute, createGradientPool: (init) => GradPool.start({ ...init, backend }) } };
}

/** Float32 tolerance for metrics computed by two engines from the same inputs (relative, floor 1). */
function expectClose(a: MetricRecord, b: MetricRecord, what: string, rel = 2e-4): void {
  const va = deterministicPart([a])[0].values;
  const vb = deterministicPart([b])[0].values;
  expect(Object.keys(vb).sort(), what).toEqual(Object.keys(va).sort());
  for (const [k, x] of Object.entries(va)) {
    const y = vb[k];
    if (typeof x === 'string' || typeof y === 'string') {
      expect(y, `${what} ${k}`).toEqual(x);
      continue;
    }
    expect(Math.abs(x - y), `${what} ${k}: ${x} vs ${y}`).toBeLessThanOrEqual(rel * Math.max(1, Math.abs(x)));
  }
}

describe('native TensorFlow backend', () => {
  it('the backend record names libtensorflow, its version and its threads', async () => {
    const c = await setupCompute({ backend: 'auto', rolloutEngine: 'tfjs' });
    expect(c.info.training).toBe('tensorflow');
    expect(c.info.tensorflow?.version).toBe('2.21.0');
    expect(c.info.tensorflow?.intraOpThreads).toBeGreaterThan(0);
    expect(c.info.tensorflow?.interOpThreads).toBeGreaterThan(0);
    expect(c.info.tensorflow?.deterministicOps).toBe(true);
    expect(c.info.detail).toMatch(
      /training on tfjs-node \(libtensorflow 2\.21\.0, CPU, \d+ intra-op \/ \d+ inter-op threads, deterministic ops\)/,
    );
    // Native TensorFlow threads every kernel itself: compute.workers = 0 means one gradient worker there.
    expect(c.workers).toBe(1);
    // The run's own backend record, as the production job returns it (stored with the run, in bundles, reused by
    // reproduce), and the record parses under the shared schema with the TensorFlow part kept.
    const r = recorder();
    const job = await trainingJob.run(
      { runId: 'r1', config: tinyConfig('grpo', BASE) as unknown as Record<string, unknown>, seed: 1, dataDir: '.' },
      r.hooks,
    );
    expect(job.backend?.training).toBe('tensorflow');
    expect(job.backend?.tensorflow).toEqual(c.info.tensorflow);
    expect(ComputeBackendInfo.parse({ ...job.backend, available: [] }).tensorflow).toEqual(c.info.tensorflow);
  });

  it('compute.intraOpThreads / interOpThreads reach TensorFlow in a fresh process, and the record says so', () => {
    // TensorFlow sizes its pools once per process, so this runs in a child. Its inter-op pool's threads are named
    // tf_Compute; their count is what TensorFlow made of the setting.
    const script = `
      import { readdirSync, readFileSync } from 'node:fs';
      import * as tf from '@tensorflow/tfjs';
      import { setupCompute } from './src/main/compute/index.ts';
      const c = await setupCompute({ backend: 'tensorflow', rolloutEngine: 'tfjs', intraOpThreads: 1, interOpThreads: 1 });
      const a = tf.randomNormal([256, 256]);
      tf.matMul(a, a).dataSync();
      const pool = readdirSync('/proc/self/task').filter((t) => readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim() === 'tf_Compute').length;
      console.log(JSON.stringify({ tensorflow: c.info.tensorflow, detail: c.info.detail, pool }));`;
    const env = { ...process.env };
    delete env.TF_NUM_INTRAOP_THREADS;
    delete env.TF_NUM_INTEROP_THREADS;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..'),
      encoding: 'utf8',
      env,
      timeout: 120_000,
    });
    const line = r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop();
    expect(line, r.stderr).toBeDefined();
    const out = JSON.parse(line!);
    expect(out.tensorflow.intraOpThreads).toBe(1);
    expect(out.tensorflow.interOpThreads).toBe(1);
    expect(out.detail).toMatch(/1 intra-op \/ 1 inter-op threads/);
    expect(out.pool).toBe(1);
  }, 120_000);

  it('same config, seed and K → bit-identical runs on tfjs-node (K = 1 and K = 2)', async () => {
    for (const K of [1, 2]) {
      const cfg = tinyConfig('grpo', { ...BASE, 'training.steps': 2, 'compute.workers': K });
      const a = recorder();
      const b = recorder();
      const ra = await runTraining(cfg, poolDeps('tensorflow'), a.hooks);
      const rb = await runTraining(cfg, poolDeps('tensorflow'), b.hooks);
      expect(
        a.rec.metrics.map((m) => m.step),
        `K=${K}`,
      ).toEqual([1, 2]);
      expect(deterministicPart(b.rec.metrics), `K=${K}`).toEqual(deterministicPart(a.rec.metrics));
      expect(rb.checkpoint.files['policy.bin'], `K=${K}`).toEqual(ra.checkpoint.files['policy.bin']);
      expect(rb.checkpoint.files['optim.bin'], `K=${K}`).toEqual(ra.checkpoint.files['optim.bin']);
    }
  }, 240_000);

  it('a first RL step on tfjs-node and on tfjs-wasm agrees within float32 tolerance (every metric, the weights)', async () => {
    const cfg = tinyConfig('grpo', BASE);
    const nat = recorder();
    const rn = await runTraining(cfg, deps(), nat.hooks);
    await onWasm();
    const wasm = recorder();
    const rw = await runTraining(cfg, deps(), wasm.hooks);
    await onNative();
    expect(nat.rec.metrics.length).toBe(1);
    expectClose(wasm.rec.metrics[0], nat.rec.metrics[0], 'step 1');
    expect(nat.rec.metrics[0].values['actor/grad_norm']).toBeGreaterThan(0);
    const pn = readCheckpoint(rn.checkpoint).policy;
    const pw = readCheckpoint(rw.checkpoint).policy;
    let worst = 0;
    for (const [name, t] of Object.entries(pw)) {
      const u = pn[name].data;
      t.data.forEach((x, i) => (worst = Math.max(worst, Math.abs(x - u[i]))));
    }
    expect(worst).toBeGreaterThan(0); // two engines, not one: the rounding differs somewhere
    expect(worst).toBeLessThan(1e-5);
  }, 240_000);

  it('a checkpoint written on one backend resumes on the other', async () => {
    const cfg = tinyConfig('grpo', { ...BASE, 'training.steps': 2, 'training.checkpointEvery': 1 });
    for (const [from, to] of [
      ['tensorflow', 'wasm'],
      ['wasm', 'tensorflow'],
    ] as const) {
      await (from === 'tensorflow' ? onNative() : onWasm());
      const full = recorder();
      await runTraining(cfg, deps(), full.hooks);
      const ck1 = full.rec.checkpoints.find((c) => c.step === 1)!;
      await (to === 'tensorflow' ? onNative() : onWasm());
      const resumed = recorder();
      const res = await runTraining(cfg, deps(), resumed.hooks, ck1);
      expect(res.step, `${from} → ${to}`).toBe(2);
      expect(resumed.rec.metrics.map((m) => m.step)).toEqual([2]);
      expectClose(full.rec.metrics[1], resumed.rec.metrics[0], `${from} → ${to} step 2`);
    }
    await onNative();
  }, 240_000);
});
