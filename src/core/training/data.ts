/**
 * Data the trainer derives from the testbed: the env factory with the run's settings, the prompt builder with
 * the run's history window, prompt encoding (the same rule the rollout uses), the tokenizer fitted to the env's
 * text, and expert turns for behaviour cloning.
 */
import { hashSeed } from '../util/rng';
import { buildPrompt, createEnv, envEntry, expertEpisode, trainSeed } from '../envs/index';
import type { EnvObservation, HistoryItem, TestbedEnv } from '../envs/types';
import type { Tokenizer } from '../agent/tokenizer';
import { fitTestbedTokenizer } from '../agent/corpus';
import type { LogProbRow } from '../agent/model';

export interface EnvSpec {
  readonly name: string;
  /** Env-specific settings; `maxSteps` is folded in where the env has such a setting. */
  readonly settings: Record<string, unknown>;
  readonly maxSteps: number;
  /** History window k (spec §3.4). */
  readonly historyWindow: number;
}

export function makeEnvFactory(spec: EnvSpec): () => TestbedEnv {
  const entry = envEntry(spec.name);
  const settings: Record<string, unknown> = { ...spec.settings };
  if ('maxSteps' in entry.settings) settings.maxSteps = spec.maxSteps;
  // Validate once, eagerly, so a bad setting fails before any training.
  entry.create(settings);
  return () => createEnv(spec.name, settings);
}

export function makePromptBuilder(
  env: { promptIntro: string },
  k: number,
): (obs: EnvObservation, history: readonly HistoryItem[]) => string {
  return (obs, history) => buildPrompt(env, obs, history, k);
}

/** `<bos>` + the prompt's tokens, keeping the most recent ones when it is longer than `maxPrompt` (as runRollout does). */
export function encodePrompt(tok: Tokenizer, text: string, maxPrompt: number): number[] {
  const body = tok.encode(text);
  if (body.length + 1 <= maxPrompt) return [tok.bosId, ...body];
  return [tok.bosId, ...body.slice(body.length - (maxPrompt - 1))];
}

/** Seeds of the behaviour-cloning tasks: a stream disjoint in practice from RL's, fixed by (seed, env). */
export function bcTaskSeed(seed: number, i: number): number {
  return trainSeed(hashSeed(seed, 'bc-task', i));
}

/** Seeds of the RL training tasks: the i-th task of the run. */
export function rlTaskSeed(seed: number, i: number): number {
  return trainSeed(hashSeed(seed, 'rl-task', i));
}

/**
 * The tokenizer for an env: the agent's testbed tokenizer fitted (deterministically) to that env's expert and
 * random episodes on training seeds, plus one token per identifier the env declares (the shop's product ids, for
 * the catalog its settings select). Independent of the run's seed, so every run and warm-start checkpoint of an
 * env shares it.
 */
export function fitEnvTokenizer(spec: EnvSpec): Tokenizer {
  const extraPieces = makeEnvFactory(spec)().identifiers?.() ?? [];
  return fitTestbedTokenizer({ envs: [spec.name], historyWindow: spec.historyWindow, extraPieces });
}

/** One supervised row: prompt ids and the expert's response ids (ends with </action>, a stop token). */
export type BcRow = LogProbRow & { readonly promptIds: number[]; readonly responseIds: number[] };

/** Expert turns of `nEpisodes` BC tasks as (prompt, response) token rows; also returns how many episodes were won. */
export function expertRows(
  spec: EnvSpec,
  tok: Tokenizer,
  seed: number,
  firstTask: number,
  nEpisodes: number,
  maxPrompt: number,
  maxSeqLen: number,
): { rows: BcRow[]; won: number } {
  const env = makeEnvFactory(spec)();
  const rows: BcRow[] = [];
  let won = 0;
  for (let i = 0; i < nEpisodes; i++) {
    const ep = expertEpisode(env, bcTaskSeed(seed, firstTask + i), spec.historyWindow);
    if (ep.won) won++;
    for (const t of ep.turns) {
      const responseIds = tok.encode(t.response);
      // A long expert response takes room from the prompt (the oldest prompt tokens go, as in the rollout).
      rows.push({ promptIds: encodePrompt(tok, t.prompt, Math.min(maxPrompt, maxSeqLen - responseIds.length)), responseIds });
    }
  }
  return { rows, won };
}
