import { describe, expect, it } from 'vitest';
import { responseDiversity } from './diversity';

const row = (prompt: number[], response: number[]) => ({ prompt, response });

describe('responseDiversity', () => {
  it('a batch collapsed onto one repeated token ("!!!!!!!", RAGEN #52): identical share 1, distinct-2 near 0, no prompt dependence', () => {
    const bang = 0;
    const rows = [1, 2, 3, 4].flatMap((p) => [row([p, 9], Array(20).fill(bang)), row([p, 9], Array(20).fill(bang))]);
    const d = responseDiversity(rows);
    expect(d['response/identical_share']).toBe(1);
    // One distinct bigram among 8 × 19.
    expect(d['response/distinct_2']).toBeCloseTo(1 / (8 * 19), 12);
    expect(d['response/prompt_mi']).toBe(0);
  });

  it('responses that depend on their prompt: MI = H(T) − H(T | X) by hand', () => {
    // Two prompts, each answered with its own token: I(X; T) = H(T) = ln 2.
    const own = responseDiversity([row([1], [5, 5]), row([2], [6, 6])]);
    expect(own['response/prompt_mi']).toBeCloseTo(Math.log(2), 12);
    expect(own['response/identical_share']).toBe(0.5);
    expect(own['response/distinct_2']).toBe(1);
    // A template that varies within each prompt as much as across them: tokens 5 and 6 under both prompts.
    const template = responseDiversity([row([1], [5, 6]), row([2], [6, 5])]);
    expect(template['response/prompt_mi']).toBeCloseTo(0, 12);
    expect(template['response/distinct_2']).toBe(1);
    // Unequal mixes: prompt 1 → {5,5,5,6}, prompt 2 → {6,6}; H(T) over {5:3, 6:3}, H(T|1) over {3,1}, H(T|2) = 0.
    const h = (ps: number[]) => -ps.reduce((s, p) => s + (p > 0 ? p * Math.log(p) : 0), 0);
    const mixed = responseDiversity([row([1], [5, 5, 5, 6]), row([2], [6, 6])]);
    expect(mixed['response/prompt_mi']).toBeCloseTo(h([0.5, 0.5]) - (4 / 6) * h([0.75, 0.25]), 12);
  });

  it('is undefined (NaN) where it cannot be measured', () => {
    expect(Object.values(responseDiversity([])).every(Number.isNaN)).toBe(true);
    const one = responseDiversity([row([1], [5]), row([1], [6])]);
    expect(one['response/distinct_2']).toBeNaN();
    expect(one['response/prompt_mi']).toBeNaN();
    expect(one['response/identical_share']).toBe(0.5);
  });
});
