import { describe, expect, it } from 'vitest';
import { buildPrompt, FORMAT_INSTRUCTION } from './prompt';
import { SokobanEnv } from './sokoban';
import type { HistoryItem } from './types';

const env = { promptIntro: 'intro line .' };
const obs = { observation: 'OBS', task: 'do it .', admissibleActions: ['up', 'go to fridge 1'] };
const hist = (n: number): HistoryItem[] => Array.from({ length: n }, (_, i) => ({ observation: `o${i + 1}`, action: `a${i + 1}` }));

describe('buildPrompt (spec §3.2, §3.4)', () => {
  it('first turn: intro, task, observation, admissible actions, instruction — in that order', () => {
    const p = buildPrompt(env, obs, [], 2);
    expect(p).toBe(
      [
        'intro line .',
        'your task is to : do it .',
        'your current observation is :',
        'OBS',
        "your admissible actions are : [ 'up' , 'go to fridge 1' ]",
        FORMAT_INSTRUCTION,
      ].join('\n'),
    );
  });
  it('later turns: step count over the whole episode, only the last k pairs, numbered as the paper does', () => {
    const p = buildPrompt(env, obs, hist(5), 2);
    expect(p).toContain('you have already taken 5 step(s) . below are the most recent 2 observations');
    expect(p).toContain("[observation 4 : 'o4' , action 4 : 'a4']\n[observation 5 : 'o5' , action 5 : 'a5']");
    expect(p).not.toContain('o3');
    expect(p).toContain('you are now at step 6 and your current observation is :\nOBS');
  });
  it('k larger than the history shows it all; k = 0 keeps only the step count', () => {
    expect(buildPrompt(env, obs, hist(1), 8)).toContain("[observation 1 : 'o1' , action 1 : 'a1']");
    const p0 = buildPrompt(env, obs, hist(3), 0);
    expect(p0).toContain('you have already taken 3 step(s) .');
    expect(p0).not.toContain('[observation');
    expect(buildPrompt(env, obs, hist(3), -1)).toBe(p0);
    expect(buildPrompt(env, obs, hist(3), Number.NaN)).toBe(p0);
  });
  it('omits the admissible list when the env lists none', () => {
    expect(buildPrompt(env, { ...obs, admissibleActions: [] }, [], 2)).not.toContain('admissible actions are');
  });
  it('sokoban k = 0 prompt stays short for the word/symbol tokenizer (≤ 150 tokens)', () => {
    const e = new SokobanEnv();
    const p = buildPrompt(e, e.reset(0), [], 0);
    const tokens = p.match(/[a-z]+|[^\sa-z]/g) ?? [];
    expect(tokens.length).toBeLessThanOrEqual(150);
  });
});
