/**
 * Held-out evaluation with honest uncertainty: success on fixed held-out tasks (group size 1) with a 95 % Wilson
 * interval, per task type, next to the random and expert baselines on the same tasks.
 */
import { Rng, hashSeed } from '../util/rng';
import { expertEpisode, randomEpisode } from '../envs/index';
import type { RolloutEngine } from '../agent/engine';
import type { Tokenizer } from '../agent/tokenizer';
import type { PromptCodec } from '../agent/policy';
import { runRollout, type RolloutResult } from '../agent/rollout';
import { makeEnvFactory, makePromptBuilder, type EnvSpec } from './data';
import { wilson } from './wilson';
import type { EvalInterval, EvalSummary } from './types';

export interface EvalOptions {
  readonly engine: RolloutEngine;
  readonly tokenizer: Tokenizer | PromptCodec;
  readonly spec: EnvSpec;
  /** Held-out task seeds (envs/splits.ts heldOutSeeds). */
  readonly seeds: readonly number[];
  /** 0 = greedy. Validation uses 0.6 (spec §2.1). */
  readonly temperature: number;
  readonly topP: number;
  readonly topK: number;
  readonly maxResponseTokens: number;
  readonly maxSeqLen: number;
  readonly rng: Rng;
  /** Tasks per batched rollout (memory/speed trade-off; results do not depend on it for greedy decoding). */
  readonly chunk?: number;
  readonly uidPrefix?: string;
  /** Awaited before each generation turn (runRollout's beforeTurn): the trainer abandons a validation there on Stop. */
  readonly beforeTurn?: () => Promise<void>;
}

export interface EvalOutcome {
  readonly summary: EvalSummary;
  readonly rollouts: RolloutResult[];
}

export async function evaluatePolicy(o: EvalOptions): Promise<EvalOutcome> {
  const makeEnv = makeEnvFactory(o.spec);
  const probe = makeEnv();
  const buildPrompt = makePromptBuilder(probe, o.spec.historyWindow);
  const chunk = o.chunk ?? 64;
  const rollouts: RolloutResult[] = [];
  for (let start = 0; start < o.seeds.length; start += chunk) {
    const seeds = o.seeds.slice(start, start + chunk);
    rollouts.push(
      await runRollout({
        engine: o.engine,
        tokenizer: o.tokenizer,
        makeEnv,
        buildPrompt,
        tasks: seeds.map((seed) => ({ seed })),
        groupSize: 1,
        sampling: { maxNewTokens: o.maxResponseTokens, temperature: o.temperature, topP: o.topP, topK: o.topK },
        maxSeqLen: o.maxSeqLen,
        rng: o.rng,
        uidPrefix: `${o.uidPrefix ?? 'eval'}.c${start}`,
        ...(o.beforeTurn ? { beforeTurn: o.beforeTurn } : {}),
      }),
    );
  }
  return { summary: summarise(o.spec.name, rollouts), rollouts };
}

export function summarise(env: string, rollouts: readonly RolloutResult[]): EvalSummary {
  let n = 0;
  let wins = 0;
  let score = 0;
  let rows = 0;
  let fmt = 0;
  const byType = new Map<string, { n: number; w: number }>();
  for (const r of rollouts) {
    for (const t of r.trajectories) {
      n++;
      if (t.won) wins++;
      score += t.score;
      const b = byType.get(t.taskType) ?? { n: 0, w: 0 };
      b.n++;
      if (t.won) b.w++;
      byType.set(t.taskType, b);
    }
    for (const row of r.rows) {
      rows++;
      if (row.formatValid) fmt++;
    }
  }
  const byTaskType: Record<string, EvalInterval> = {};
  for (const [k, b] of [...byType.entries()].sort((a, c) => (a[0] < c[0] ? -1 : 1))) byTaskType[k] = wilson(b.w, b.n);
  return {
    env,
    episodes: n,
    success: wilson(wins, n),
    scoreMean: n > 0 ? score / n : NaN,
    validFormatRatio: rows > 0 ? fmt / rows : NaN,
    byTaskType,
  };
}

/** Success of the uniform-random admissible-action policy and of the expert on the same held-out tasks. */
export function baselines(spec: EnvSpec, seeds: readonly number[]): { random: EvalInterval; expert: EvalInterval } {
  const env = makeEnvFactory(spec)();
  const rng = new Rng(hashSeed('random-baseline', spec.name));
  let r = 0;
  let e = 0;
  for (const s of seeds) {
    if (randomEpisode(env, s, rng, spec.historyWindow).won) r++;
    if (expertEpisode(env, s, spec.historyWindow).won) e++;
  }
  return { random: wilson(r, seeds.length), expert: wilson(e, seeds.length) };
}
