/**
 * Batched multi-turn rollout (spec §3.5): B tasks × G rollouts per task, all environments stepped in lockstep,
 * one batched generation per turn over the environments still active, a row per (trajectory, turn).
 *
 * Differences from the reference loop, on purpose: finished environments are not generated for (the reference
 * generates for all and drops the rows; the result is the same, minus wasted tokens). Prompts longer than
 * `maxSeqLen − maxNewTokens` keep <bos> and their most recent tokens and are flagged `truncated`.
 *
 * Determinism: the engine's sampling stream is `rng`; env seeds come from the tasks. Same engine + weights + rng
 * state + tasks ⇒ same rows.
 */
import type { Rng } from '../util/rng';
import type { EnvObservation, HistoryItem, TextEnv } from '../envs/types';
import type { RolloutEngine } from './engine';
import type { SamplingOptions } from './sampling';
import type { Tokenizer } from './tokenizer';
import { isPromptCodec, labPromptCodec, type PromptCodec } from './policy';

export interface RolloutTask {
  /** Env seed for reset(). */
  seed: number;
  /** Stable id (defaults to the env's taskId() if it has one, else `seed:<seed>`). */
  taskId?: string;
}

export interface RolloutOptions {
  engine: RolloutEngine;
  /** The lab tokenizer (prompts are `<bos>` + the text's ids) or a PromptCodec (an LLM's chat template). */
  tokenizer: Tokenizer | PromptCodec;
  /** A fresh environment (called B·G times). */
  makeEnv: () => TextEnv;
  /** The user prompt text for the current turn (e.g. envs/prompt.ts buildPrompt with the run's history window). */
  buildPrompt: (obs: EnvObservation, history: readonly HistoryItem[], turn: number) => string;
  tasks: readonly RolloutTask[];
  /** G: rollouts per task (the GRPO group). */
  groupSize: number;
  /** Turn limit; default the env's maxSteps. */
  maxTurns?: number;
  /** stopIds default to the codec's (the lab tokenizer's [</action>, <eos>]). */
  sampling: Omit<SamplingOptions, 'stopIds'> & { stopIds?: readonly number[] };
  /** The model's maxSeqLen (prompt + response must fit). */
  maxSeqLen: number;
  rng: Rng;
  /** Prefix for uids so rows from different steps never collide, e.g. `s12`. */
  uidPrefix?: string;
  /**
   * Awaited before each turn's generation. The trainer throws from it to abandon the rollout when a stop is asked
   * for (a turn is the rollout's unit of work: one batched generation).
   */
  beforeTurn?: () => Promise<void>;
}

/** One (trajectory, turn) row: what the advantage estimators and the losses consume. */
export interface TurnRow {
  /** Group id: all G rollouts of one task share it. */
  uid: string;
  /** Trajectory id, unique within the rollout. */
  trajUid: string;
  /** Index of the task in `tasks`, and G index within its group. */
  taskIndex: number;
  groupIndex: number;
  turn: number;
  promptIds: number[];
  responseIds: number[];
  /** Behaviour log-prob per response token (rollout engine). */
  behaviourLogProbs: number[];
  /** GiGPO anchor state: the raw observation this turn acted on. */
  anchor: string;
  /** Same text as `anchor` (kept under the trajectory-viewer name). */
  observation: string;
  promptText: string;
  responseText: string;
  envReward: number;
  formatValid: boolean;
  actionValid: boolean;
  appliedAction: string;
  done: boolean;
  won: boolean;
  score: number;
  /** The prompt lost its oldest tokens to fit maxSeqLen. */
  truncated: boolean;
  /** The response hit maxNewTokens without a stop token. */
  overlong: boolean;
}

export interface TrajectoryInfo {
  uid: string;
  trajUid: string;
  taskIndex: number;
  groupIndex: number;
  taskId: string;
  taskType: string;
  /** R_τ: undiscounted sum of env rewards over active turns. */
  episodeReturn: number;
  won: boolean;
  score: number;
  /** Turns taken. */
  length: number;
  /** Indices into `rows`, in turn order. */
  rowIndices: number[];
}

export interface RolloutResult {
  rows: TurnRow[];
  trajectories: TrajectoryInfo[];
  /** Generated tokens and engine calls, for throughput metrics. */
  stats: { generatedTokens: number; promptTokens: number; generateCalls: number; turns: number };
}

export async function runRollout(o: RolloutOptions): Promise<RolloutResult> {
  const { engine } = o;
  const tok = isPromptCodec(o.tokenizer) ? o.tokenizer : labPromptCodec(o.tokenizer);
  if (!Number.isInteger(o.groupSize) || o.groupSize < 1) throw new Error(`rollout.groupSize: must be an integer ≥ 1, got ${o.groupSize}`);
  if (o.tasks.length === 0) throw new Error('rollout.tasks: empty; pass at least one task');
  const sampling: SamplingOptions = { ...o.sampling, stopIds: o.sampling.stopIds ?? tok.stopIds };
  const maxPrompt = o.maxSeqLen - sampling.maxNewTokens;
  if (maxPrompt < 8) {
    throw new Error(
      `rollout: maxSeqLen ${o.maxSeqLen} leaves ${maxPrompt} prompt tokens after maxNewTokens ${sampling.maxNewTokens}; raise model.maxSeqLen or lower rollout.maxResponseTokens`,
    );
  }
  const prefix = o.uidPrefix ? `${o.uidPrefix}.` : '';
  interface Slot {
    env: TextEnv;
    obs: EnvObservation;
    history: HistoryItem[];
    info: TrajectoryInfo;
    done: boolean;
  }
  const slots: Slot[] = [];
  o.tasks.forEach((task, ti) => {
    for (let g = 0; g < o.groupSize; g++) {
      const env = o.makeEnv();
      const obs = env.reset(task.seed);
      const withId = env as TextEnv & { taskId?: () => string };
      const taskId = task.taskId ?? (typeof withId.taskId === 'function' ? withId.taskId() : `seed:${task.seed}`);
      slots.push({
        env,
        obs,
        history: [],
        done: false,
        info: {
          uid: `${prefix}t${ti}`,
          trajUid: `${prefix}t${ti}.g${g}`,
          taskIndex: ti,
          groupIndex: g,
          taskId,
          taskType: env.taskType(),
          episodeReturn: 0,
          won: false,
          score: 0,
          length: 0,
          rowIndices: [],
        },
      });
    }
  });
  const maxTurns = o.maxTurns ?? Math.max(...slots.map((s) => s.env.maxSteps));
  const rows: TurnRow[] = [];
  const stats = { generatedTokens: 0, promptTokens: 0, generateCalls: 0, turns: 0 };

  for (let turn = 0; turn < maxTurns; turn++) {
    const active = slots.filter((s) => !s.done);
    if (active.length === 0) break;
    stats.turns++;
    const prompts = active.map((s) => {
      const text = o.buildPrompt(s.obs, s.history, turn);
      return { text, ...tok.promptIds(text, maxPrompt) };
    });
    if (o.beforeTurn) await o.beforeTurn();
    const gen = await engine.generate(
      prompts.map((p) => p.ids),
      sampling,
      o.rng,
    );
    stats.generateCalls++;
    active.forEach((s, k) => {
      const responseIds = gen.tokens[k];
      const responseText = tok.decode(responseIds);
      const anchor = s.obs.observation;
      const res = s.env.step(responseText);
      stats.generatedTokens += responseIds.length;
      stats.promptTokens += prompts[k].ids.length;
      s.info.rowIndices.push(rows.length);
      s.info.episodeReturn += res.reward;
      s.info.length = turn + 1;
      s.info.won = res.won;
      s.info.score = res.score;
      const last = res.done || turn + 1 >= maxTurns;
      rows.push({
        uid: s.info.uid,
        trajUid: s.info.trajUid,
        taskIndex: s.info.taskIndex,
        groupIndex: s.info.groupIndex,
        turn,
        promptIds: prompts[k].ids,
        responseIds,
        behaviourLogProbs: gen.logProbs[k],
        anchor,
        observation: anchor,
        promptText: prompts[k].text,
        responseText,
        envReward: res.reward,
        formatValid: res.formatValid,
        actionValid: res.actionValid,
        appliedAction: res.appliedAction,
        done: last,
        won: res.won,
        score: res.score,
        truncated: prompts[k].truncated,
        overlong: gen.finish[k] === 'length',
      });
      s.history.push({ observation: anchor, action: res.appliedAction });
      s.obs = res;
      if (last) s.done = true;
    });
  }
  return { rows, trajectories: slots.map((s) => s.info), stats };
}
