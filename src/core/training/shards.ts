/**
 * Data-parallel training: the work one worker does on its shard of a batch, and how the main thread
 * splits a batch and combines the shards' results.
 *
 * A batch's rows are cut into K contiguous shards by index (`shardRanges`); worker k differentiates shard k on
 * its own tfjs backend with weights equal to the main model's. Every shard's loss divides by the WHOLE batch's
 * aggregation denominators (spec §1.1: token-mean over the mini-batch needs the mini-batch's token count, not a
 * per-shard mean), exactly as a batch split for memory does (chunking.ts). So the shards' losses and gradients add
 * up to the unsplit batch's, and the main thread sums them in shard order (0, 1, …, K−1) and applies one AdamW
 * update. Same inputs and K ⇒ the same float32 operations in the same order ⇒ bit-identical results; a different K
 * changes only where partial sums are cut, i.e. float32 summation order.
 *
 * These functions are pure core code: the worker in src/main/compute/gradWorker.ts calls them on its own model.
 */
import * as tf from '@tensorflow/tfjs';
import type { LogProbRow, ModelWeights, PolicyModel } from '../agent/model';
import { weightSpecs } from '../agent/model';
import type { TrainerPolicy } from '../agent/policy';
import { actorLoss, type ActorLossParams } from '../algorithms/losses/actor-loss';
import { stopGradient } from '../algorithms/tensor';
import { accumulateGrads, chunkRows } from './chunking';

/** Rows per forward chunk when recomputing old / reference log-probs on the trainer engine. */
export const LOGPROB_CHUNK = 32;

/** The row of a shard: what a forward pass needs, nothing of the episode around it. */
export interface ShardRow {
  readonly promptIds: readonly number[];
  readonly responseIds: readonly number[];
}

/** The actor loss on one shard of a mini-batch (denominators are the whole mini-batch's, set by the caller). */
export interface ActorShard {
  readonly rows: readonly ShardRow[];
  readonly old: readonly (readonly number[])[];
  readonly ref: readonly (readonly number[])[] | null;
  readonly adv: readonly number[];
  /** Decoupled rollout correction: IS weights per token of each row (absent: off). */
  readonly isWeights?: readonly (readonly number[])[];
  /** Decoupled rollout correction: 1 keep / 0 rejected per token (absent: no rejection); masks every loss term. */
  readonly keep?: readonly (readonly number[])[];
  /**
   * Bypass-mode rejection: the current log-probs per token of each row that the main thread's whole-batch
   * denominator was counted from (trainer.ts wholeDenominators); the loss corrects with these, not its own pass.
   */
  readonly bypassLogProbs?: readonly (readonly number[])[];
  /**
   * Sequence masking: 1 keep / 0 masked per row, as the main thread's whole-batch denominator counted them
   * (trainer.ts wholeDenominators); the loss masks these rows, not the ones its own pass would.
   */
  readonly seqKeep?: readonly number[];
  /** With `pgDenominator` and `auxDenominator` of the whole mini-batch. */
  readonly params: ActorLossParams;
  /**
   * π_old := sg(π_θ), the IS ratio exactly 1 (spec §6.1-4): one mini-batch × one epoch, or the first mini-batch of
   * the first epoch, which runs before any AdamW step (θ is still θ_old).
   */
  readonly onPolicy: boolean;
  /** Also send back each row's current log-probs: the trainer takes them as π_old for rows it did not recompute. */
  readonly returnLogProbs?: boolean;
  readonly temperature: number;
  /** Response tokens of the whole mini-batch: token-mean metrics are weighted by the shard's share of them. */
  readonly mbTokens: number;
  /**
   * Tokens of each row the policy loss keeps and of the whole mini-batch (wholeDenominators' pg counts): the
   * policy-loss token means (PG_MASK_MEANS) are means over these, so they are weighted by the shard's share of them.
   * Absent: by the share of response tokens, as the other token means.
   */
  readonly pgTokens?: { readonly rows: readonly number[]; readonly total: number };
  readonly budgetMB: number;
}

/** Behaviour cloning on one shard of a BC batch: −Σ log p(expert token) / tokens of the whole batch. */
export interface BcShard {
  readonly rows: readonly ShardRow[];
  readonly tokens: number;
  readonly budgetMB: number;
}

/** Old log-probs of one shard of the step's rows. */
export interface LogProbShard {
  readonly rows: readonly ShardRow[];
  readonly temperature: number;
  readonly budgetMB: number;
}

export interface LogProbsOut {
  readonly logProbs: number[][];
  readonly entropyMean: number[];
}

/** A shard's gradient flattened in weightSpecs order, which tensors it has, and its metric parts (they add up). */
export interface ShardGrad {
  readonly grad: Float32Array;
  readonly present: readonly boolean[];
  readonly metrics: Record<string, number>;
  /** Each row's current log-probs (its response length), when the shard asked for them (`returnLogProbs`). */
  readonly logProbs?: number[][];
}

/**
 * The pool of K workers, each holding the policy's current weights (src/main/compute/gradPool.ts implements it).
 * Every call takes one input per worker (at most `size`) and resolves with the outputs in the same order; a
 * worker that throws or dies rejects the call with an error naming the worker, and the pool is then unusable.
 */
export interface GradientPool {
  readonly size: number;
  /** Make every worker hold `w` from the next call on (after each AdamW update). */
  setWeights(w: ModelWeights): Promise<void>;
  actor(shards: readonly ActorShard[]): Promise<ShardGrad[]>;
  bc(shards: readonly BcShard[]): Promise<ShardGrad[]>;
  logProbs(shards: readonly LogProbShard[]): Promise<LogProbsOut[]>;
  dispose(): Promise<void>;
}

/** Starts K workers holding `weights` on the run's tfjs backend. */
export type GradientPoolFactory = (init: { readonly weights: ModelWeights; readonly workers: number }) => Promise<GradientPool>;

/**
 * K contiguous [lo, hi) shards of n rows by index, sizes differing by at most one (the first n mod K get the
 * extra row); fewer than K when n < K (no empty shard). Deterministic in (n, K).
 */
export function shardRanges(n: number, k: number): Array<[number, number]> {
  if (!Number.isInteger(k) || k < 1) throw new Error(`shardRanges: worker count must be an integer ≥ 1, got ${k}`);
  const parts = Math.min(k, n);
  const out: Array<[number, number]> = [];
  const base = Math.floor(n / Math.max(1, parts));
  const extra = n - base * parts;
  let lo = 0;
  for (let i = 0; i < parts; i++) {
    const hi = lo + base + (i < extra ? 1 : 0);
    out.push([lo, hi]);
    lo = hi;
  }
  return out;
}

/** Only the fields a forward pass reads, as plain arrays (they cross a thread boundary by structured clone). */
export function shardRow(r: LogProbRow): ShardRow {
  return { promptIds: Array.from(r.promptIds), responseIds: Array.from(r.responseIds) };
}

/** Actor metrics whose chunk values are parts of the mini-batch's value (they add up), not means. */
export const SUMMED_METRICS: ReadonlySet<string> = new Set(['actor/pg_loss', 'actor/entropy', 'actor/kl_loss', 'actor/num_masked_seqs']);

/**
 * Token means over the policy loss's mask — the tokens sequence masking and rejection keep, not every response
 * token: a chunk's value weighs by its share of the mini-batch's kept tokens (a chunk whose rows are all masked
 * adds nothing), so they equal the unsplit mini-batch's means.
 */
export const PG_MASK_MEANS: ReadonlySet<string> = new Set(['actor/pg_clipfrac', 'actor/pg_clipfrac_lower', 'actor/ppo_kl']);

/** A chunk's weight for a policy-loss token mean: its kept tokens over the mini-batch's (0 when none is kept). */
export function pgShare(rowTokens: readonly number[], total: number): number {
  return total > 0 ? rowTokens.reduce((a, b) => a + b, 0) / total : 0;
}

/**
 * One shard's actor-loss gradient (worker side). The shard is itself cut into memory chunks (chunking.ts), each
 * dividing by the mini-batch's denominators; metric parts follow the trainer's chunk rule: pg_loss, entropy,
 * kl_loss and masked-row counts add up, token means are weighted by the chunk's share of the mini-batch's tokens
 * they average (clip fractions and ppo_kl: the kept tokens, PG_MASK_MEANS; the others: response tokens). actor/kl_coef is not a part of anything and is left to the caller.
 */
export function actorShardGradient(model: PolicyModel, s: ActorShard): ShardGrad {
  const vars = model.trainableVariables();
  const chunks = chunkRows(s.rows, model.config, s.budgetMB);
  const metrics: Record<string, number> = {};
  const grads: tf.NamedTensorMap = {};
  const logProbs: number[][] = [];
  for (const [lo, hi] of chunks) {
    const rows = s.rows.slice(lo, hi);
    const R = Math.max(1, ...rows.map((r) => r.responseIds.length));
    const oldT = s.onPolicy ? null : padded(s.old.slice(lo, hi), R);
    const refT = s.ref ? padded(s.ref.slice(lo, hi), R) : undefined;
    const advT = broadcastRows(s.adv.slice(lo, hi), R);
    const isT = s.isWeights ? padded(s.isWeights.slice(lo, hi), R) : undefined;
    const keepT = s.keep ? padded(s.keep.slice(lo, hi), R) : undefined;
    const bypassT = s.bypassLogProbs ? padded(s.bypassLogProbs.slice(lo, hi), R) : undefined;
    const seqKeepT = s.seqKeep ? tf.tensor1d(s.seqKeep.slice(lo, hi), 'float32') : undefined;
    let lossMetrics: Record<string, tf.Scalar> = {};
    let current = null as tf.Tensor2D | null;
    const r = tf.variableGrads(() => {
      const cur = model.tokenLogProbs(rows, { temperature: s.temperature });
      if (s.returnLogProbs) current = tf.keep(cur.logProbs);
      const res = actorLoss(
        {
          logProb: cur.logProbs,
          oldLogProb: oldT ?? (stopGradient(cur.logProbs) as tf.Tensor2D),
          advantages: advT,
          mask: keepT ? (tf.mul(cur.mask, keepT) as tf.Tensor2D) : cur.mask,
          entropy: cur.entropy,
          ...(refT ? { refLogProb: refT } : {}),
          ...(isT ? { rolloutIsWeights: isT } : {}),
          ...(bypassT ? { bypassLogProb: bypassT } : {}),
          ...(seqKeepT ? { seqKeep: seqKeepT } : {}),
        },
        s.params,
      );
      lossMetrics = res.metrics as Record<string, tf.Scalar>;
      return res.value;
    }, vars);
    const share = rows.reduce((n, x) => n + x.responseIds.length, 0) / s.mbTokens;
    const pgW = s.pgTokens ? pgShare(s.pgTokens.rows.slice(lo, hi), s.pgTokens.total) : share;
    for (const [k, t] of Object.entries(lossMetrics)) {
      const v = t.dataSync()[0];
      t.dispose();
      if (k === 'actor/kl_coef') continue;
      metrics[k] = (metrics[k] ?? 0) + (SUMMED_METRICS.has(k) ? 1 : PG_MASK_MEANS.has(k) ? pgW : share) * v;
    }
    r.value.dispose();
    accumulateGrads(grads, r.grads);
    if (current) logProbs.push(...responseRows(current, rows));
    tf.dispose([
      ...(oldT ? [oldT] : []),
      advT,
      ...(refT ? [refT] : []),
      ...(isT ? [isT] : []),
      ...(keepT ? [keepT] : []),
      ...(bypassT ? [bypassT] : []),
      ...(seqKeepT ? [seqKeepT] : []),
    ]);
  }
  return { ...flattenGrads(model, grads), metrics, ...(s.returnLogProbs ? { logProbs } : {}) };
}

/** The rows of a [rows, R] log-prob tensor cut to each row's response length, as plain arrays; disposes it. */
export function responseRows(t: tf.Tensor2D, rows: readonly { readonly responseIds: ArrayLike<number> }[]): number[][] {
  const R = t.shape[1];
  const data = t.dataSync() as Float32Array;
  t.dispose();
  return rows.map((r, i) => Array.from(data.subarray(i * R, i * R + r.responseIds.length)));
}

/** One shard's behaviour-cloning gradient (worker side); metric `bc/loss` is the shard's part of the batch loss. */
export function bcShardGradient(model: PolicyModel, s: BcShard): ShardGrad {
  const grads: tf.NamedTensorMap = {};
  let loss = 0;
  for (const [lo, hi] of chunkRows(s.rows, model.config, s.budgetMB)) {
    const part = s.rows.slice(lo, hi);
    const r = tf.variableGrads(() => {
      const lp = model.tokenLogProbs(part);
      return tf.neg(tf.div(tf.sum(tf.mul(lp.logProbs, lp.mask)), s.tokens)) as tf.Scalar;
    }, model.trainableVariables());
    loss += r.value.dataSync()[0];
    r.value.dispose();
    accumulateGrads(grads, r.grads);
  }
  return { ...flattenGrads(model, grads), metrics: { 'bc/loss': loss } };
}

/** Per-token log-probs (and per-row mean entropy) of each row's response under `model`, no gradient. */
export async function trainerLogProbs(
  model: Pick<TrainerPolicy, 'config' | 'tokenLogProbs'>,
  rows: readonly LogProbRow[],
  temperature: number,
  budgetMB: number,
  beforeChunk?: () => Promise<void>,
): Promise<LogProbsOut> {
  const logProbs: number[][] = [];
  const entropyMean: number[] = [];
  for (const [lo, hi] of chunkRows(rows, model.config, budgetMB, LOGPROB_CHUNK)) {
    // The trainer's stop check (hooks.interrupted): a stop asked for meanwhile abandons the pass here.
    if (beforeChunk) await beforeChunk();
    const chunk = rows.slice(lo, hi);
    const out = tf.tidy(() => {
      const r = model.tokenLogProbs(chunk, { temperature });
      return [r.logProbs, tf.div(tf.sum(tf.mul(r.entropy, r.mask), 1), tf.maximum(tf.sum(r.mask, 1), 1))] as const;
    });
    const [lp, ent] = out;
    const R = lp.shape[1];
    const data = (await lp.data()) as Float32Array;
    const e = (await ent.data()) as Float32Array;
    lp.dispose();
    ent.dispose();
    chunk.forEach((r, i) => {
      logProbs.push(Array.from(data.subarray(i * R, i * R + r.responseIds.length)));
      entropyMean.push(e[i]);
    });
  }
  return { logProbs, entropyMean };
}

/** Total parameter count of a model config's weights (the length of a flattened gradient). */
export function flatLength(cfg: ModelWeights['config']): number {
  return weightSpecs(cfg).reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1), 0);
}

/** A gradient map (keyed by the model's variable names) as one Float32Array in weightSpecs order; disposes it. */
function flattenGrads(model: PolicyModel, grads: tf.NamedTensorMap): { grad: Float32Array; present: boolean[] } {
  const vars = model.trainableVariables();
  const grad = new Float32Array(flatLength(model.config));
  const present: boolean[] = [];
  let off = 0;
  for (const v of vars) {
    const g = grads[v.name];
    present.push(g !== undefined);
    if (g) {
      grad.set(g.dataSync() as Float32Array, off);
      g.dispose();
    }
    off += v.size;
  }
  return { grad, present };
}

/**
 * The shards' gradients summed in shard order (0, 1, …) as a gradient map for `vars` (the main model's variables
 * in weightSpecs order), and their metric parts summed in the same order. A variable no shard touched is absent,
 * as it would be from tf.variableGrads.
 */
export function combineShards(
  vars: readonly tf.Variable[],
  parts: readonly ShardGrad[],
): { grads: tf.NamedTensorMap; metrics: Record<string, number> } {
  if (parts.length === 0) throw new Error('combineShards: no shard results');
  const n = parts[0].grad.length;
  const sum = new Float32Array(n);
  for (const p of parts) {
    if (p.grad.length !== n) throw new Error(`combineShards: shard gradients differ in length (${p.grad.length} vs ${n})`);
    for (let i = 0; i < n; i++) sum[i] += p.grad[i];
  }
  const grads: tf.NamedTensorMap = {};
  let off = 0;
  vars.forEach((v, j) => {
    if (parts.some((p) => p.present[j])) grads[v.name] = tf.tensor(sum.subarray(off, off + v.size), v.shape, 'float32');
    off += v.size;
  });
  if (off !== n) throw new Error(`combineShards: the model has ${off} parameters but the shards sent ${n}`);
  const metrics: Record<string, number> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p.metrics)) metrics[k] = (metrics[k] ?? 0) + v;
  return { grads, metrics };
}

/** One value per row, repeated over the row's R token positions: [rows, R] (the row advantage per token). */
export function broadcastRows(v: readonly number[], R: number): tf.Tensor2D {
  return tf.tensor2d(
    v.flatMap((x) => Array.from({ length: R }, () => x)),
    [v.length, R],
  );
}

/** Rows of per-token values, zero-padded to width R: [rows, R]. */
export function padded(x: readonly (readonly number[])[], R: number): tf.Tensor2D {
  const data = new Float32Array(x.length * R);
  x.forEach((row, i) => {
    for (let j = 0; j < Math.min(R, row.length); j++) data[i * R + j] = row[j];
  });
  return tf.tensor2d(data, [x.length, R]);
}
