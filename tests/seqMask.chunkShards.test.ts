/**
 * Sequence masking (GRPO_SM: algorithm.policyLoss.seqMask) on a mini-batch differentiated whole, in 1-row chunks
 * (compute.activationBudgetMB) and on K = 2 gradient workers: the rows the whole-batch pg denominator counts are the
 * rows the loss keeps. For chunks and shards the trainer counts them (wholeDenominators) in a forward pass of its
 * own, before the losses run theirs; with LoRA dropout only the loss's pass drops activations, so a row whose drift
 * sits at δ can be kept by one pass and masked by the other.
 *
 * Every row is built so that its per-token policy losses do not depend on which rows are kept: A = −1 and each
 * token's log-ratio log π_θ − log π_old is about ±2, so vanilla's loss is the dual-clip cap c (ratio e² > c) or
 * 1 − ε_lo (ratio e⁻² < 1 − ε_lo) on alternate tokens. With every row of one length, a token-mean pg_loss is
 * then (c + 1 − ε_lo) / 2 whichever rows are kept, exactly when the denominator counts the kept rows' tokens, and
 * (kept by the loss / counted) times that when the two disagree. Half the rows drift δ − η (kept), half δ + η
 * (masked), from the log-probs without dropout.
 */
import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PolicyModel, resolveModelConfig, type ModelWeights } from '../src/core/agent/model';
import type { TrainerPolicy } from '../src/core/agent/policy';
import type { TurnRow } from '../src/core/agent/rollout';
import type { RunConfig } from '../src/core/config/index';
import { HfCausalLM } from '../src/core/llm/causalLm';
import { parseLlmConfig } from '../src/core/llm/config';
import { LoraAdapters, parseLoraSpec } from '../src/core/llm/lora';
import { LlmPolicy } from '../src/core/llm/policy';
import type { HfTokenizer } from '../src/core/llm/tokenizer';
import { LlmTrainerPolicy } from '../src/core/llm/trainerPolicy';
import { AdamW } from '../src/core/training/adamw';
import { actorShardGradient, type GradientPool } from '../src/core/training/shards';
import { updatePolicy, updatePolicyParallel } from '../src/core/training/trainer';
import { Rng } from '../src/core/util/rng';
import { tinyConfig, useWasm } from './tinyTrainer';

beforeAll(useWasm);

const DELTA = 3e-3;
/** How far each row's drift sits from δ: far above float32 noise (~1e-6), well below the dropout's effect. */
const ETA = 1e-3;
const L = 8;
const N = 8;

/** K in-process "workers" (model copies on this thread) running the worker's own shard code. */
function inProcessPool(weights: ModelWeights, k: number): GradientPool {
  const models = Array.from({ length: k }, (_, i) => PolicyModel.fromWeights(weights, `sw${i}`));
  return {
    size: k,
    setWeights: async (w) => models.forEach((m) => m.setWeights(w)),
    actor: async (shards) => shards.map((s, i) => actorShardGradient(models[i], s)),
    bc: async () => {
      throw new Error('not used');
    },
    logProbs: async () => {
      throw new Error('not used');
    },
    dispose: async () => models.forEach((m) => m.dispose()),
  };
}

/**
 * Rows of L response tokens and π_old placed from the current log-probs `cur` (no dropout): token j's
 * log π_old − log π_θ is ∓2 + drift, so the row's mean drift is δ − η (even rows) or δ + η (odd rows).
 */
function rowsAtThreshold(shapes: { promptIds: number[]; responseIds: number[] }[], cur: number[][]) {
  const rows = shapes.map((s, i) => ({ ...s, uid: `u${i}`, trajUid: `t${i}` }) as unknown as TurnRow);
  const old = shapes.map((s, i) => s.responseIds.map((_, j) => cur[i][j] + (j % 2 === 0 ? -2 : 2) + DELTA + (i % 2 === 0 ? -ETA : ETA)));
  return { rows, old, adv: shapes.map(() => -1) };
}

function shapesOf(vocab: number, seed: number) {
  const rng = new Rng(seed);
  const ids = (n: number) => Array.from({ length: n }, () => 1 + Math.floor(rng.float() * (vocab - 2)));
  return Array.from({ length: N }, (_, i) => ({ promptIds: ids(3 + (i % 3)), responseIds: ids(L) }));
}

/** Two mini-batches of N/2 rows (π_old is then the rows' own, not sg(π_θ)), one epoch, token-mean. */
function smConfig(how: 'whole' | 'chunked'): RunConfig {
  const c = tinyConfig('grpo_sm', {
    'algorithm.policyLoss.seqMask.delta': DELTA,
    'algorithm.kl.enabled': false,
    'algorithm.entropyCoeff': 0,
    'algorithm.aggregation': 'token-mean',
    'optim.epochs': 1,
    'optim.miniBatchRows': 8,
  });
  return {
    ...c,
    optim: { ...c.optim, miniBatchRows: N / 2 },
    compute: { ...c.compute, activationBudgetMB: how === 'chunked' ? 1e-6 : 4096 },
  };
}

/** pg_loss when the denominator counts exactly the rows the loss keeps. */
function consistentPgLoss(c: RunConfig): number {
  const p = c.algorithm.policyLoss;
  return (p.clipRatioC + 1 - p.clipRatioLow) / 2;
}

const noStop = async (): Promise<void> => {};

describe('sequence masking at δ: the whole-batch denominator counts the rows the loss keeps', () => {
  it('lab model: whole, 1-row chunks and K = 2 keep the same rows and give the same pg_loss and token means', async () => {
    const model0 = PolicyModel.create(
      resolveModelConfig({ size: 'custom', dModel: 16, nLayers: 1, nHeads: 2, dFF: 32, maxSeqLen: 64 }, 40),
      new Rng(3),
    );
    const w0 = model0.getWeights();
    const shapes = shapesOf(40, 11);
    const cur = tf.tidy(() => model0.tokenLogProbs(shapes).logProbs.arraySync());
    model0.dispose();
    const { rows, old, adv } = rowsAtThreshold(shapes, cur);

    const update = async (how: 'whole' | 'chunked' | 'K=2') => {
      const cfg = smConfig(how === 'chunked' ? 'chunked' : 'whole');
      const model = PolicyModel.fromWeights(w0);
      const opt = new AdamW(model.trainableVariables(), { ...cfg.optim });
      const pool = how === 'K=2' ? inProcessPool(w0, 2) : null;
      const o = old.map((r) => [...r]);
      const rep = pool
        ? await updatePolicyParallel(pool, model, opt, rows, o, null, adv, cfg, false, null, noStop)
        : await updatePolicy(model, opt, rows, o, null, adv, cfg, false, null, noStop);
      await pool?.dispose();
      model.dispose();
      opt.dispose();
      return rep.metrics;
    };
    const expected = consistentPgLoss(smConfig('whole'));
    const whole = await update('whole');
    for (const how of ['whole', 'chunked', 'K=2'] as const) {
      const m = how === 'whole' ? whole : await update(how);
      // Half of each mini-batch's rows drift past δ with a negative advantage: 2 per mini-batch, 4 in all.
      expect(m['actor/num_masked_seqs'], how).toBe(N / 2);
      expect(Math.abs(m['actor/pg_loss'] - expected), how).toBeLessThan(1e-5 * expected);
      // Token means over the kept tokens: a chunk of masked rows weighs nothing (1-row chunks read 0.25 for 0.5 before).
      for (const k of ['actor/pg_clipfrac', 'actor/pg_clipfrac_lower', 'actor/ppo_kl']) {
        expect(Math.abs(m[k] - whole[k]), `${how} ${k}`).toBeLessThan(1e-6);
      }
    }
    expect(whole['actor/pg_clipfrac']).toBeCloseTo(0.5, 6);
  });

  it('LoRA dropout, 1-row chunks: pg_loss is the kept rows’ mean, the rows the denominator counted', async () => {
    const hfCfg = parseLlmConfig({
      architectures: ['LlamaForCausalLM'],
      hidden_size: 16,
      intermediate_size: 24,
      num_hidden_layers: 1,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      max_position_embeddings: 64,
      vocab_size: 24,
      rms_norm_eps: 1e-5,
      rope_theta: 10000,
      tie_word_embeddings: false,
    });
    const base = HfCausalLM.random(hfCfg, new Rng(1), 0.2);
    const lora = LoraAdapters.create(base, parseLoraSpec('r=4,alpha=8,dropout=0.3,targets=q_proj+v_proj+down_proj'), new Rng(2));
    // B starts at 0 (the adapter adds nothing, so neither would its dropout): give B values, as after training.
    const rng = new Rng(5);
    for (const [name, v] of Object.entries(lora.vars)) {
      if (name.includes('lora_B'))
        v.assign(
          tf.tensor(
            Array.from({ length: v.size }, () => (rng.float() - 0.5) * 0.2),
            v.shape,
          ),
        );
    }
    const policy: TrainerPolicy = new LlmTrainerPolicy(new LlmPolicy(base, null as unknown as HfTokenizer, lora), 64);
    const shapes = shapesOf(24, 13);
    const cur = tf.tidy(() => policy.tokenLogProbs(shapes).logProbs.arraySync());
    const { rows, old, adv } = rowsAtThreshold(shapes, cur);
    const w0 = policy.getWeights();

    // The dropout moves a row's drift by more than η: its own pass would keep some odd rows or mask some even ones.
    const dropped = tf.tidy(() => {
      policy.setTraining?.(new Rng(99));
      const d = policy.tokenLogProbs(shapes).logProbs.arraySync();
      policy.setTraining?.(null);
      return d;
    });
    const flips = shapes.filter((_, i) => {
      const drift = (lp: number[][]) => old[i].reduce((s, o, j) => s + o - lp[i][j], 0) / L;
      return drift(cur) <= DELTA !== drift(dropped) <= DELTA;
    }).length;
    expect(flips).toBeGreaterThan(0);

    const expected = consistentPgLoss(smConfig('whole'));
    for (const how of ['whole', 'chunked'] as const) {
      policy.setWeights(w0);
      const cfg = smConfig(how);
      const opt = new AdamW(policy.trainableVariables(), { ...cfg.optim });
      const rep = await updatePolicy(
        policy,
        opt,
        rows,
        old.map((r) => [...r]),
        null,
        adv,
        cfg,
        false,
        null,
        noStop,
        new Rng(7),
      );
      opt.dispose();
      // Whichever rows a pass keeps, the per-token losses are the same: pg_loss is off only if the denominator counted others.
      expect(Math.abs(rep.metrics['actor/pg_loss'] - expected), how).toBeLessThan(1e-5 * expected);
      if (how === 'chunked') {
        // The chunks' losses mask the rows the denominator's pass (no dropout) masked: the odd ones.
        expect(rep.metrics['actor/num_masked_seqs']).toBe(N / 2);
      }
    }
    policy.dispose();
  });
});
