/**
 * Prompt construction (spec §3.2, §3.4), compacted for a word/symbol tokenizer but with the paper's parts in
 * the paper's order: the env's role/rules line, the task (re-injected every turn), the step count and the
 * last k (observation, action) pairs, the current observation, the admissible actions, and the instruction
 * to reason in <think> </think> and answer with one admissible action in <action> </action>.
 *
 * The phrase "you have already taken N step(s)" is kept verbatim (lower-cased): EMPG reads the turn index
 * from it (spec §1.3c).
 */
import type { EnvObservation, HistoryItem } from './types';

export const DEFAULT_HISTORY_WINDOW = 2;

export const FORMAT_INSTRUCTION =
  'first reason inside <think> </think> , then give exactly one admissible action inside <action> </action> .';

export interface PromptEnv {
  readonly promptIntro: string;
}

/**
 * Build the user prompt for the current turn.
 * @param history every (observation, action) pair of this episode so far, oldest first; only the last `k` are shown,
 *                but the step count uses the full length.
 * @param k history window (spec default 2; 0 = no history block).
 */
export function buildPrompt(
  env: PromptEnv,
  obs: EnvObservation,
  history: readonly HistoryItem[],
  k: number = DEFAULT_HISTORY_WINDOW,
): string {
  const parts: string[] = [env.promptIntro, `your task is to : ${obs.task}`];
  const n = history.length;
  const window = Math.max(0, Math.floor(Number.isFinite(k) ? k : 0));
  if (n > 0) {
    const shown = window > 0 ? history.slice(Math.max(0, n - window)) : [];
    if (shown.length > 0) {
      parts.push(`you have already taken ${n} step(s) . below are the most recent ${shown.length} observations and the actions you took :`);
      const first = n - shown.length + 1;
      shown.forEach((h, i) => parts.push(`[observation ${first + i} : '${h.observation}' , action ${first + i} : '${h.action}']`));
    } else {
      parts.push(`you have already taken ${n} step(s) .`);
    }
    parts.push(`you are now at step ${n + 1} and your current observation is :`);
  } else {
    parts.push('your current observation is :');
  }
  parts.push(obs.observation);
  if (obs.admissibleActions.length > 0) {
    parts.push(`your admissible actions are : [ ${obs.admissibleActions.map((a) => `'${a}'`).join(' , ')} ]`);
  }
  parts.push(FORMAT_INSTRUCTION);
  return parts.join('\n');
}
