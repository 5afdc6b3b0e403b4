/**
 * bench:model's data-parallel training rows: the same training workload as the tfjs-wasm row
 * (rows × tokens, loss on the response, one AdamW step), its rows split across K gradient worker threads
 * (src/main/compute/gradPool.ts: the trainer's K > 1 path) against the in-process single-thread step, timed
 * alternately in this one process so the machine's load weighs on both alike.
 */
import type { Scalar } from '@tensorflow/tfjs';

export interface DpTrainResult {
  readonly workers: number;
  readonly params: number;
  /** Training tokens/s with K workers. */
  readonly train_tokens_per_s: number;
  /** The in-process (K = 1) step, alternated with the K-worker one. */
  readonly single_tokens_per_s: number;
  readonly peak_rss_mb: number;
}

export async function dataParallelTraining(
  size: 'nano' | 'small' | 'base',
  workers: number,
  work: { vocab: number; trainRows: number; trainLen: number; respLen: number },
  reps: { warmup: number; trainSteps: number },
): Promise<DpTrainResult> {
  const tf = await import('@tensorflow/tfjs');
  const { resolveModelConfig, paramCount, PolicyModel } = await import('../src/core/agent');
  const { Rng } = await import('../src/core/util/rng');
  const { AdamW } = await import('../src/core/training/adamw');
  const { combineShards, shardRanges } = await import('../src/core/training/shards');
  const { initBackend } = await import('../src/main/compute/backends');
  const { GradPool } = await import('../src/main/compute/gradPool');
  const { DEFAULT_CONFIG } = await import('../src/core/config/index');
  await initBackend('wasm');
  const cfg = resolveModelConfig({ size, geluForm: DEFAULT_CONFIG.model.geluForm }, work.vocab);
  const rng = new Rng(1);
  const randIds = (n: number): number[] => Array.from({ length: n }, () => 8 + rng.int(work.vocab - 8));
  const rows = Array.from({ length: work.trainRows }, () => ({
    promptIds: [1, ...randIds(work.trainLen - work.respLen)],
    responseIds: randIds(work.respLen),
  }));
  const tokens = rows.reduce((n, r) => n + r.responseIds.length, 0);
  const optOpts = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, gradClip: 1 };

  const single = PolicyModel.create(cfg, new Rng(2), 'single');
  const singleOpt = new AdamW(single.trainableVariables(), optOpts);
  const singleStep = async (): Promise<void> => {
    const { grads, value } = tf.variableGrads(() => {
      const o = single.tokenLogProbs(rows);
      return tf.div(tf.neg(tf.sum(tf.mul(o.logProbs, o.mask))), tf.sum(o.mask)) as Scalar;
    }, single.trainableVariables());
    singleOpt.step(grads, 1e-4);
    value.dispose();
    tf.dispose(grads);
  };

  const main = PolicyModel.create(cfg, new Rng(2), 'dp');
  const opt = new AdamW(main.trainableVariables(), optOpts);
  const pool = await GradPool.start({ weights: main.getWeights(), workers, backend: 'wasm' });
  const shards = shardRanges(rows.length, workers).map(([a, z]) => ({ rows: rows.slice(a, z), tokens, budgetMB: 2048 }));
  const dpStep = async (): Promise<void> => {
    const { grads } = combineShards(main.trainableVariables(), await pool.bc(shards));
    opt.step(grads, 1e-4);
    tf.dispose(Object.values(grads));
    await pool.setWeights(main.getWeights());
  };
  try {
    for (let i = 0; i < reps.warmup; i++) {
      await singleStep();
      await dpStep();
    }
    let tSingle = 0;
    let tDp = 0;
    for (let i = 0; i < reps.trainSteps; i++) {
      let t0 = performance.now();
      await singleStep();
      tSingle += performance.now() - t0;
      t0 = performance.now();
      await dpStep();
      tDp += performance.now() - t0;
    }
    const n = work.trainRows * work.trainLen * reps.trainSteps;
    return {
      workers,
      params: paramCount(cfg),
      train_tokens_per_s: n / (tDp / 1000),
      single_tokens_per_s: n / (tSingle / 1000),
      peak_rss_mb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await pool.dispose();
  }
}
