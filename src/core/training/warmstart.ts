/**
 * Behaviour cloning (spec §2.2, "BC warm start"): supervised fine-tuning on the testbed expert's turns, loss on
 * response tokens only (token-mean negative log-likelihood). Its result is π_ref for the RL phase, as the paper
 * starts RL from (and regularises towards) its SFT checkpoint.
 *
 * Deterministic: data come from fixed expert episodes (seeded task stream), mini-batches are drawn by a seeded
 * shuffle, and the optimiser is our AdamW — same (env, settings, seed, updates, backend) ⇒ same weights.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng, hashSeed } from '../util/rng';
import type { Clock } from '../util/rng';
import { PolicyModel, resolveModelConfig } from '../agent/model';
import type { Tokenizer } from '../agent/tokenizer';
import type { RunConfig } from '../config/types';
import { AdamW, type AdamWOptions } from './adamw';
import { accumulateGrads, activationBudgetOf, chunkRows, DEFAULT_ACTIVATION_BUDGET_MB } from './chunking';
import { expertRows, fitEnvTokenizer, type BcRow, type EnvSpec } from './data';
import { combineShards, shardRanges, shardRow, type GradientPool, type GradientPoolFactory } from './shards';

export interface BcOptions {
  readonly spec: EnvSpec;
  readonly seed: number;
  /** Optimiser updates (one mini-batch each). */
  readonly updates: number;
  /** Rows (turns) per update. */
  readonly batchRows: number;
  readonly lr: number;
  readonly optim: AdamWOptions;
  /** Longest prompt kept (model maxSeqLen − max response tokens), as in the rollout. */
  readonly maxPrompt: number;
  /** The model's context length (prompt + response must fit). */
  readonly maxSeqLen: number;
  /** compute.activationBudgetMB: a batch estimated above it is differentiated in chunks (chunking.ts). Default 2048. */
  readonly activationBudgetMB?: number;
  /** Called every `progressEvery` updates and at the end. */
  readonly onProgress?: (p: { update: number; updates: number; loss: number; elapsedS: number }) => void;
  readonly progressEvery?: number;
  /** Awaited between updates; 'stop' ends BC early (the run then stops). */
  readonly checkControl?: () => Promise<'continue' | 'stop'>;
  /**
   * compute.workers = K > 1: each BC batch's rows are split into K contiguous shards on a gradient pool
   * started here; every shard divides by the whole batch's token count, the gradients are summed in worker order.
   */
  readonly gradientPool?: { readonly workers: number; readonly create: GradientPoolFactory };
}

export interface BcReport {
  readonly updates: number;
  readonly episodes: number;
  readonly rows: number;
  readonly finalLoss: number;
  readonly skipped: number;
  readonly seconds: number;
  readonly stopped: boolean;
}

/**
 * Number of distinct expert episodes BC draws from: about two visits per row over the whole schedule, within
 * [32, 5000] (calibration.md: more distinct puzzles generalise better than more passes over few).
 */
export function bcEpisodeCount(updates: number, batchRows: number): number {
  return Math.max(32, Math.min(5000, Math.ceil((updates * batchRows) / 9)));
}

export async function behaviourClone(model: PolicyModel, tok: Tokenizer, o: BcOptions, clock: Clock): Promise<BcReport> {
  const t0 = clock.now();
  if (!Number.isInteger(o.updates) || o.updates < 0) throw new Error(`warmStart.bcUpdates: must be an integer ≥ 0, got ${o.updates}`);
  if (!Number.isInteger(o.batchRows) || o.batchRows < 1)
    throw new Error(`warmStart.bcBatchRows: must be an integer ≥ 1, got ${o.batchRows}`);
  if (o.updates === 0) return { updates: 0, episodes: 0, rows: 0, finalLoss: NaN, skipped: 0, seconds: 0, stopped: false };
  const episodes = bcEpisodeCount(o.updates, o.batchRows);
  const { rows } = expertRows(o.spec, tok, o.seed, 0, episodes, o.maxPrompt, o.maxSeqLen);
  const rng = new Rng(hashSeed(o.seed, 'bc-order'));
  const opt = new AdamW(model.trainableVariables(), o.optim);
  let order: number[] = [];
  let cursor = 0;
  const nextBatch = (): BcRow[] => {
    const out: BcRow[] = [];
    while (out.length < o.batchRows) {
      if (cursor >= order.length) {
        order = rng.shuffle(Array.from({ length: rows.length }, (_, i) => i));
        cursor = 0;
      }
      out.push(rows[order[cursor++]]);
    }
    return out;
  };
  const every = o.progressEvery ?? 25;
  let loss = NaN;
  let skipped = 0;
  let done = 0;
  let stopped = false;
  let pool: GradientPool | null = null;
  try {
    if (o.gradientPool && o.gradientPool.workers > 1)
      pool = await o.gradientPool.create({ weights: model.getWeights(), workers: o.gradientPool.workers });
    for (let u = 1; u <= o.updates; u++) {
      if (o.checkControl && (await o.checkControl()) === 'stop') {
        stopped = true;
        break;
      }
      const batch = nextBatch();
      if (pool) {
        const tokens = Math.max(
          1,
          batch.reduce((s, r) => s + r.responseIds.length, 0),
        );
        const budgetMB = o.activationBudgetMB ?? DEFAULT_ACTIVATION_BUDGET_MB;
        const parts = await pool.bc(
          shardRanges(batch.length, pool.size).map(([a, z]) => ({ rows: batch.slice(a, z).map(shardRow), tokens, budgetMB })),
        );
        const { grads, metrics } = combineShards(model.trainableVariables(), parts);
        loss = metrics['bc/loss'];
        const rep = opt.step(grads, o.lr);
        for (const g of Object.values(grads)) g.dispose();
        if (rep.skipped) skipped++;
        else await pool.setWeights(model.getWeights());
        done = u;
        if (o.onProgress && (u % every === 0 || u === o.updates))
          o.onProgress({ update: u, updates: o.updates, loss, elapsedS: (clock.now() - t0) / 1000 });
        continue;
      }
      // A batch over compute.activationBudgetMB is differentiated in chunks (chunking.ts); every chunk divides by
      // the whole batch's token count, so the chunks' losses and gradients sum to the batch's. Within the budget
      // the batch is one chunk.
      const chunks = chunkRows(batch, model.config, o.activationBudgetMB ?? DEFAULT_ACTIVATION_BUDGET_MB);
      const tokens = Math.max(
        1,
        batch.reduce((s, r) => s + r.responseIds.length, 0),
      );
      const grads: tf.NamedTensorMap = {};
      loss = 0;
      for (const [lo, hi] of chunks) {
        const part = batch.slice(lo, hi);
        const r = tf.variableGrads(() => {
          const lp = model.tokenLogProbs(part);
          return tf.neg(tf.div(tf.sum(tf.mul(lp.logProbs, lp.mask)), tokens)) as tf.Scalar;
        }, model.trainableVariables());
        loss += (await r.value.data())[0];
        r.value.dispose();
        accumulateGrads(grads, r.grads);
      }
      const rep = opt.step(grads, o.lr);
      for (const g of Object.values(grads)) g.dispose();
      if (rep.skipped) skipped++;
      done = u;
      if (o.onProgress && (u % every === 0 || u === o.updates))
        o.onProgress({ update: u, updates: o.updates, loss, elapsedS: (clock.now() - t0) / 1000 });
    }
  } finally {
    if (pool) await pool.dispose();
    opt.dispose();
  }
  return { updates: done, episodes, rows: rows.length, finalLoss: loss, skipped, seconds: (clock.now() - t0) / 1000, stopped };
}

/**
 * The warm-start recipe for a run config (warmStart.source = 'scratch', and `arlarena warmstart`): the env's
 * tokenizer, a seeded initial policy, then behaviour cloning with warmStart.{bcUpdates, bcBatchRows, bcLr}.
 * Same config + seed + backend ⇒ the same weights.
 */
export async function warmStartRecipe(
  config: RunConfig,
  clock: Clock,
  hooks: Pick<BcOptions, 'onProgress' | 'checkControl' | 'progressEvery' | 'gradientPool'> = {},
): Promise<{ tok: Tokenizer; model: PolicyModel; report: BcReport }> {
  const spec = envSpecOf(config);
  const tok = fitEnvTokenizer(spec);
  const mcfg = resolveModelConfig(modelSpecOf(config), tok.size);
  const model = PolicyModel.create(mcfg, new Rng(hashSeed(config.seed, 'init')));
  const ws = config.warmStart;
  const report = await behaviourClone(
    model,
    tok,
    {
      spec,
      seed: config.seed,
      updates: config.warmStart.source === 'none' ? 0 : ws.bcUpdates,
      batchRows: ws.bcBatchRows,
      lr: ws.bcLr,
      optim: {
        beta1: config.optim.beta1,
        beta2: config.optim.beta2,
        eps: config.optim.eps,
        weightDecay: config.optim.weightDecay,
        gradClip: config.optim.gradClip,
      },
      maxPrompt: mcfg.maxSeqLen - config.rollout.maxResponseTokens,
      maxSeqLen: mcfg.maxSeqLen,
      activationBudgetMB: activationBudgetOf(config),
      ...hooks,
    },
    clock,
  );
  return { tok, model, report };
}

export function envSpecOf(config: RunConfig): EnvSpec {
  return {
    name: config.env.name,
    settings: { ...config.env.settings },
    maxSteps: config.env.maxSteps,
    historyWindow: config.env.historyWindow,
  };
}

export function modelSpecOf(config: RunConfig): Parameters<typeof resolveModelConfig>[0] {
  const m = config.model;
  // A config stored before model.geluForm keeps the tanh arithmetic it was run with.
  const geluForm = m.geluForm ?? 'tanh';
  return m.size === 'custom'
    ? { size: 'custom', dModel: m.dModel, nLayers: m.nLayers, nHeads: m.nHeads, dFF: m.dFF, maxSeqLen: m.maxSeqLen, geluForm }
    : { size: m.size, maxSeqLen: m.maxSeqLen, geluForm };
}
