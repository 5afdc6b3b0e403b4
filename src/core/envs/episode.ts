/**
 * Whole episodes for behaviour cloning and baselines: `expertEpisode` (the expert's moves in the strict
 * format, with the prompts the policy would see) and `randomAction` / `randomEpisode` (uniform over the
 * admissible actions: the random baseline).
 */
import type { Rng } from '../util/rng';
import { formatResponse } from './parse';
import { buildPrompt, DEFAULT_HISTORY_WINDOW } from './prompt';
import type { Episode, EpisodeTurn, ExpertMove, HistoryItem, TestbedEnv } from './types';

/** The expert as an object, for code that wants an `Expert` to pass around (behaviour cloning, upper bounds). */
export interface Expert {
  /** The expert's move from the env's current state (null when the episode is over). */
  move(env: TestbedEnv): ExpertMove | null;
}

export const EXPERT: Expert = { move: (env) => env.expertMove() };

/** A policy for `runEpisode`: returns the full response text for the current state. */
export type ResponsePolicy = (env: TestbedEnv, prompt: string) => string;

/** Run one episode from `seed` with `policy`; records anchor, prompt (window k), response and outcome per turn. */
export function runEpisode(env: TestbedEnv, seed: number, policy: ResponsePolicy, k: number = DEFAULT_HISTORY_WINDOW): Episode {
  let obs = env.reset(seed);
  const history: HistoryItem[] = [];
  const turns: EpisodeTurn[] = [];
  let ret = 0;
  let won = false;
  let score = 0;
  while (!env.isDone()) {
    const prompt = buildPrompt(env, obs, history, k);
    const response = policy(env, prompt);
    const r = env.step(response);
    turns.push({
      observation: obs.observation,
      task: obs.task,
      admissibleActions: obs.admissibleActions,
      prompt,
      response,
      action: r.appliedAction,
      reward: r.reward,
      formatValid: r.formatValid,
      actionValid: r.actionValid,
      done: r.done,
      won: r.won,
    });
    history.push({ observation: obs.observation, action: r.appliedAction });
    ret += r.reward;
    won = r.won;
    score = r.score;
    obs = r;
  }
  return { env: env.name, seed, taskId: env.taskId(), taskType: env.taskType(), turns, won, episodeReturn: ret, score };
}

/** The expert's response for the current state (an inadmissible "look" if it has no move, which cannot happen on solvable tasks). */
export function expertResponse(env: TestbedEnv): string {
  const m = env.expertMove();
  return m === null ? formatResponse('no plan', 'still') : formatResponse(m.think, m.action);
}

/** One expert episode (used for behaviour cloning and as the upper bound). */
export function expertEpisode(env: TestbedEnv, seed: number, k: number = DEFAULT_HISTORY_WINDOW): Episode {
  return runEpisode(env, seed, (e) => expertResponse(e), k);
}

/**
 * A uniformly random admissible action, in the strict format. For the shop, "search[<your query>]" is filled
 * with random words of the instruction.
 */
export function randomAction(env: TestbedEnv, rng: Rng): string {
  const acts = env.current().admissibleActions;
  if (acts.length === 0) return formatResponse('random', 'look');
  let a = acts[rng.int(acts.length)];
  if (a === 'search[<your query>]') {
    const words = env
      .current()
      .task.split(' ')
      .filter((w) => /^[a-z]+$/.test(w));
    const q: string[] = [];
    const nWords = 1 + rng.int(3);
    for (let i = 0; i < nWords && words.length > 0; i++) q.push(words[rng.int(words.length)]);
    a = `search[${q.join(' ')}]`;
  }
  return formatResponse('random', a);
}

export function randomEpisode(env: TestbedEnv, seed: number, rng: Rng, k: number = DEFAULT_HISTORY_WINDOW): Episode {
  return runEpisode(env, seed, (e) => randomAction(e, rng), k);
}
