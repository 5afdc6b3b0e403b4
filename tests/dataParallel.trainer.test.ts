/**
 * Data-parallel training through the real trainer, with real gradient worker threads on tfjs-wasm:
 * - the same config, seed and K = 2 give bit-identical runs (a 3-step run twice);
 * - K = 1 and K = 2 differ only by float32 summation order: the first step (same rollouts) has the same episode
 *   metrics exactly and update metrics equal within float tolerance;
 * - a gradient worker that dies mid-run fails the run naming the worker (no hang), nothing of the failed step is
 *   applied or checkpointed, and resuming from the last checkpoint reproduces the uninterrupted run;
 * - behaviour cloning sharded over K = 2 ends at the single-thread weights within float32 tolerance, and at the same
 *   weights bit for bit when repeated.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runTraining, workersOf } from '../src/core/training/trainer';
import { readCheckpoint } from '../src/core/training/checkpoint';
import { warmStartRecipe } from '../src/core/training/warmstart';
import type { GradientPool } from '../src/core/training/shards';
import type { TrainerDeps } from '../src/core/training/types';
import { GradPool } from '../src/main/compute/gradPool';
import { deps, deterministicPart, recorder, tinyConfig, useWasm, TEST_BACKEND } from './tinyTrainer';

beforeAll(useWasm);

/** Trainer deps with a K-worker pool on wasm; `onPool` sees each pool the trainer starts; `cores` = what src/main resolves compute.workers = 0 to. */
function poolDeps(onPool?: (p: GradPool) => GradientPool, cores?: number): TrainerDeps {
  const base = deps();
  return {
    ...base,
    compute: {
      ...base.compute,
      ...(cores !== undefined ? { workers: cores } : {}),
      createGradientPool: async (init) => {
        const p = await GradPool.start({ ...init, backend: TEST_BACKEND });
        return onPool ? onPool(p) : p;
      },
    },
  };
}

/** `p` as the trainer sees it, with some of its calls replaced (fault injection, call counting). */
function wrapPool(p: GradPool, over: Partial<Omit<GradientPool, 'size'>>): GradientPool {
  return {
    get size() {
      return p.size;
    },
    setWeights: (w) => p.setWeights(w),
    bc: (s) => p.bc(s),
    logProbs: (s) => p.logProbs(s),
    actor: (s) => p.actor(s),
    dispose: () => p.dispose(),
    ...over,
  };
}

const CFG = { 'training.steps': 3, 'training.checkpointEvery': 1, 'compute.workers': 2 };

describe('data-parallel trainer (compute.workers = 2)', () => {
  it('same config, seed and K → bit-identical metrics and weights; a dead worker fails the run and resume reproduces it', async () => {
    const cfg = tinyConfig('grpo', CFG);
    const a = recorder();
    const b = recorder();
    const ra = await runTraining(cfg, poolDeps(), a.hooks);
    const rb = await runTraining(cfg, poolDeps(), b.hooks);
    expect(a.rec.metrics.map((m) => m.step)).toEqual([1, 2, 3]);
    expect(deterministicPart(b.rec.metrics)).toEqual(deterministicPart(a.rec.metrics));
    expect(rb.checkpoint.files['policy.bin']).toEqual(ra.checkpoint.files['policy.bin']);
    expect(rb.checkpoint.files['optim.bin']).toEqual(ra.checkpoint.files['optim.bin']);
    // More than one mini-batch per step, so the pool ran several updates and weight broadcasts per step.
    expect(a.rec.metrics[0].values['actor/off_policy_step']).toBeGreaterThan(0);

    // Worker 1 dies during the first update after the step-1 checkpoint.
    const c = recorder();
    let killed = false;
    const killing = (p: GradPool): GradientPool =>
      wrapPool(p, {
        actor: async (s) => {
          if (!killed && c.rec.checkpoints.length > 0) {
            killed = true;
            const pending = p.actor(s);
            pending.catch(() => undefined); // awaited below; rejects while kill() runs
            await p.kill(1);
            return pending;
          }
          return p.actor(s);
        },
      });
    await expect(runTraining(cfg, poolDeps(killing), c.hooks)).rejects.toThrow(/gradient worker 1 exited/);
    expect(killed).toBe(true);
    expect(c.rec.checkpoints.map((k) => k.step)).toEqual([1]);
    expect(c.rec.metrics.map((m) => m.step)).toEqual([1]);
    expect(c.rec.checkpoints[0].files['policy.bin']).toEqual(a.rec.checkpoints[0].files['policy.bin']);

    const d = recorder();
    const rd = await runTraining(cfg, poolDeps(), d.hooks, c.rec.checkpoints[0]);
    expect(rd.step).toBe(3);
    expect(deterministicPart(d.rec.metrics)).toEqual(deterministicPart(a.rec.metrics.filter((m) => m.step > 1)));
    expect(rd.checkpoint.files['policy.bin']).toEqual(ra.checkpoint.files['policy.bin']);
  }, 240_000);

  it('K = 1 and K = 2 differ by float32 summation order only (first step: same rollouts, update within tolerance)', async () => {
    const one = recorder();
    const two = recorder();
    await runTraining(tinyConfig('grpo', { 'compute.workers': 1 }), poolDeps(), one.hooks);
    await runTraining(tinyConfig('grpo', { 'compute.workers': 2 }), poolDeps(), two.hooks);
    const v1 = deterministicPart(one.rec.metrics)[0].values;
    const v2 = deterministicPart(two.rec.metrics)[0].values;
    for (const k of Object.keys(v1)) {
      if (k.startsWith('episode/') || k.startsWith('batch/') || k.startsWith('response_length/') || k.startsWith('critic/'))
        expect(v2[k], k).toEqual(v1[k]);
    }
    for (const k of ['actor/pg_loss', 'actor/entropy', 'actor/kl_loss', 'actor/ppo_kl', 'actor/grad_norm', 'actor/pg_clipfrac']) {
      const x = v1[k] as number;
      const y = v2[k] as number;
      expect(Number.isFinite(x), k).toBe(true);
      expect(Math.abs(x - y), `${k}: K=1 ${x}, K=2 ${y}`).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(x)));
    }
    expect(v1['actor/grad_norm']).toBeGreaterThan(0);
  }, 240_000);

  it('behaviour cloning over 2 workers: bit-identical when repeated, the K = 1 weights within float32 tolerance', async () => {
    const cfg = tinyConfig('grpo', { 'warmStart.bcUpdates': 3, 'warmStart.bcBatchRows': 6 });
    const create = poolDeps().compute.createGradientPool!;
    const clock = deps().clock;
    const one = await warmStartRecipe(cfg, clock);
    const a = await warmStartRecipe(cfg, clock, { gradientPool: { workers: 2, create } });
    const b = await warmStartRecipe(cfg, clock, { gradientPool: { workers: 2, create } });
    expect(a.report.updates).toBe(3);
    expect(a.report.finalLoss).toBeCloseTo(one.report.finalLoss, 5);
    const w1 = one.model.getWeights().tensors;
    const wa = a.model.getWeights().tensors;
    const wb = b.model.getWeights().tensors;
    let maxDiff = 0;
    let moved = 0;
    const init = (await warmStartRecipe(tinyConfig('grpo', { 'warmStart.bcUpdates': 0 }), clock)).model.getWeights().tensors;
    for (const k of Object.keys(w1)) {
      expect(wb[k]).toEqual(wa[k]);
      for (let i = 0; i < w1[k].length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(w1[k][i] - wa[k][i]));
        moved = Math.max(moved, Math.abs(w1[k][i] - init[k][i]));
      }
    }
    expect(moved).toBeGreaterThan(1e-4);
    expect(maxDiff).toBeLessThan(1e-5);
    for (const m of [one, a, b]) m.model.dispose();
  }, 120_000);

  it('compute.workers = 0 keeps the K the run started with when it resumes on a machine with other cores; a stored config without the field stays at K = 1', async () => {
    const cfg = tinyConfig('grpo', { 'training.steps': 2, 'training.checkpointEvery': 1, 'compute.workers': 0 });
    const whole = recorder();
    const rw = await runTraining(cfg, poolDeps(undefined, 2), whole.hooks);
    expect(rw.workers).toBe(2);
    expect(readCheckpoint(whole.rec.checkpoints[0]).state.workers).toBe(2);
    // Resumed from step 1 where "one per core" would mean 1: it goes on with K = 2 and ends bit for bit where the
    // uninterrupted run ended (K = 1 would change the summation order and so the weights).
    const resumed = recorder();
    const rr = await runTraining(cfg, poolDeps(undefined, 1), resumed.hooks, whole.rec.checkpoints[0]);
    expect(rr.workers).toBe(2);
    expect(deterministicPart(resumed.rec.metrics)).toEqual(deterministicPart(whole.rec.metrics.filter((m) => m.step > 1)));
    expect(rr.checkpoint.files['policy.bin']).toEqual(rw.checkpoint.files['policy.bin']);

    const compute = poolDeps(undefined, 2).compute;
    const { workers: _w, ...computeWithout } = cfg.compute;
    expect(workersOf({ ...cfg, compute: computeWithout as typeof cfg.compute }, compute)).toBe(1);
    expect(workersOf(cfg, compute)).toBe(2);
    expect(workersOf(cfg, compute, 3)).toBe(3);
    expect(workersOf({ ...cfg, compute: { ...cfg.compute, workers: 1 } }, compute, 2)).toBe(1);
  }, 240_000);

  it('the old-log-prob pass goes in rounds of 32 rows per worker and a stop is answered between rounds', async () => {
    // 9 tasks × 4 rollouts × 2 turns: more than one round (64 rows at K = 2); every row's π_old from the separate pass.
    const cfg = tinyConfig('grpo', {
      'compute.workers': 2,
      'rollout.tasksPerStep': 9,
      'rollout.groupSize': 4,
      'compute.reuseFirstMiniBatch': false,
      'optim.miniBatchRows': 36,
    });
    const counting =
      (calls: number[][]) =>
      (p: GradPool): GradientPool =>
        wrapPool(p, {
          logProbs: (s) => {
            calls.push(s.map((x) => x.rows.length));
            return p.logProbs(s);
          },
        });
    const whole: number[][] = [];
    const w = recorder();
    const done = await runTraining(cfg, poolDeps(counting(whole)), w.hooks);
    expect(done.status).toBe('completed');
    const rows = w.rec.metrics[0].values['batch/rows'] as number;
    expect(rows).toBeGreaterThan(64);
    expect(whole.flat().reduce((a, b) => a + b, 0)).toBe(rows);
    expect(whole.length).toBe(Math.ceil(rows / 64));
    expect(whole.slice(0, -1).every((c) => c.length === 2 && c[0] === 32 && c[1] === 32)).toBe(true);

    // Asked before the pass, before round 1, then before round 2: the stop lands there, after one round.
    const stopped: number[][] = [];
    const s = recorder();
    let asks = 0;
    s.hooks.interrupted = async (where) => where === 'logprobs' && ++asks === 3;
    const res = await runTraining(cfg, poolDeps(counting(stopped)), s.hooks);
    expect(res.status).toBe('stopped');
    expect(res.step).toBe(0);
    expect(stopped).toEqual([[32, 32]]);
    expect(s.rec.metrics).toEqual([]);
  }, 240_000);

  it('an explicit K > 1 without a pool factory is a clear error', async () => {
    await expect(runTraining(tinyConfig('grpo', { 'compute.workers': 2 }), deps(), recorder().hooks)).rejects.toThrow(
      /compute.workers 2: .*without a gradient worker pool.*compute.workers=1/,
    );
  });
});
