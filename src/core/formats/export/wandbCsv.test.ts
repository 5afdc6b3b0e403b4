import { describe, expect, it } from 'vitest';
import { createLineParser, detectFormat } from '../index';
import type { SourceStep } from '../types';
import { wandbChartCsv } from './wandbCsv';

function reimport(text: string): SourceStep[] {
  const steps: SourceStep[] = [];
  const p = createLineParser('wandb-csv', (s) => steps.push(s));
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) p.push(l);
  p.end();
  expect(p.skipped).toEqual({});
  return steps;
}

describe('wandbChartCsv', () => {
  const columns = [
    { run: 'sampo · seed 1', steps: [1, 2, 3], values: [0.5, Number.NaN, 1 / 3] },
    { run: 'grpo, "tuned"', steps: [2, 4], values: [Number.POSITIVE_INFINITY, -1e-300] },
  ];

  it("writes W&B's chart export layout: Step, then each run's column with equal __MIN / __MAX, quoted where needed", () => {
    const lines = wandbChartCsv('actor/grad_norm', columns).trimEnd().split('\n');
    expect(lines[0]).toBe(
      'Step,sampo · seed 1 - actor/grad_norm,sampo · seed 1 - actor/grad_norm__MIN,sampo · seed 1 - actor/grad_norm__MAX,' +
        '"grpo, ""tuned"" - actor/grad_norm","grpo, ""tuned"" - actor/grad_norm__MIN","grpo, ""tuned"" - actor/grad_norm__MAX"',
    );
    expect(lines.slice(1)).toEqual([
      '1,0.5,0.5,0.5,,,',
      '2,NaN,NaN,NaN,inf,inf,inf',
      `3,${1 / 3},${1 / 3},${1 / 3},,,`,
      '4,,,,-1e-300,-1e-300,-1e-300',
    ]);
  });

  it('is detected as a W&B export and re-imports to the same runs, steps and doubles', () => {
    const text = wandbChartCsv('actor/grad_norm', columns);
    expect(detectFormat(new TextEncoder().encode(text), 'chart.csv')?.format).toBe('wandb-csv');
    const got = reimport(text).map((s) => ({ run: s.run, step: s.step, v: s.values['actor/grad_norm'] }));
    expect(got.filter((s) => s.run === 'sampo · seed 1')).toEqual([
      { run: 'sampo · seed 1', step: 1, v: 0.5 },
      { run: 'sampo · seed 1', step: 2, v: Number.NaN },
      { run: 'sampo · seed 1', step: 3, v: 1 / 3 },
    ]);
    expect(got.filter((s) => s.run === 'grpo, "tuned"')).toEqual([
      { run: 'grpo, "tuned"', step: 2, v: Number.POSITIVE_INFINITY },
      { run: 'grpo, "tuned"', step: 4, v: -1e-300 },
    ]);
  });

  it('refuses two columns with one name, and steps and values of different lengths', () => {
    expect(() => wandbChartCsv('k', [columns[0], { ...columns[0] }])).toThrow(/two columns are named "sampo · seed 1"/);
    expect(() => wandbChartCsv('k', [{ run: 'a', steps: [1, 2], values: [1] }])).toThrow(/2 steps but 1 values/);
  });
});
