/**
 * A JSON line nested 5,000 deep or carrying 20,000 values is one bad record: skipped and counted, the rest of the
 * file imported (hardening round three: it aborted the whole import with "Maximum call stack size exceeded").
 * A run whose lines each bring new keys keeps its first MAX_RUN_KEYS keys (200 lines of 9,000 new keys each, a
 * 31 MB file, took 13.4 GB and 6 minutes to import).
 */
import { describe, expect, it } from 'vitest';
import { createLineParser, parseTrainerState, type SourceStep } from './index';
import { MAX_RECORD_DEPTH, MAX_RECORD_KEYS, MAX_RUN_KEYS, SKIP_KEYS_PAST_RUN_LIMIT } from './steps';

function parse(format: 'jsonl' | 'verl-jsonl', lines: string[]) {
  const steps: SourceStep[] = [];
  const p = createLineParser(format, (s) => steps.push(s));
  for (const l of lines) p.push(l);
  p.end();
  return { steps, skipped: p.skipped };
}

const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

describe('record limits', () => {
  it('a line nested 5,000 deep is skipped and counted; the lines around it are steps', () => {
    const { steps, skipped } = parse('jsonl', ['{"step":1,"loss":0.5}', `{"step":2,"x":${deep(5000)}}`, '{"step":3,"loss":0.25}']);
    expect(steps.map((s) => s.step)).toEqual([1, 3]);
    expect(skipped).toEqual({ [`record nested deeper than ${MAX_RECORD_DEPTH} levels`]: 1 });
    const verl = parse('verl-jsonl', ['{"step":1,"data":{"a":1}}', `{"step":2,"data":${deep(5000)}}`, '{"step":3,"data":{"a":2}}']);
    expect(verl.steps.map((s) => s.step)).toEqual([1, 3]);
    expect(verl.skipped[`record nested deeper than ${MAX_RECORD_DEPTH} levels`]).toBe(1);
  });

  it('nesting up to the limit is read', () => {
    const { steps } = parse('jsonl', [`{"step":1,"x":${deep(MAX_RECORD_DEPTH - 2)}}`]);
    expect(Object.keys(steps[0].values)).toEqual([
      `x/${Array(MAX_RECORD_DEPTH - 2)
        .fill('a')
        .join('/')}`,
    ]);
  });

  it('a line with more values than the limit is skipped and counted', () => {
    const wide = `{"step":2,${Array.from({ length: MAX_RECORD_KEYS + 1 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    const { steps, skipped } = parse('jsonl', ['{"step":1,"loss":0.5}', wide, '{"step":3,"loss":0.25}']);
    expect(steps.map((s) => s.step)).toEqual([1, 3]);
    expect(skipped).toEqual({ [`record with more than ${MAX_RECORD_KEYS} values`]: 1 });
  });

  it('a run keeps its first MAX_RUN_KEYS distinct keys; values of later new keys are left out and counted', () => {
    const line = (step: number, n: number) =>
      `{"step":${step},"loss":0.5,${Array.from({ length: n }, (_, i) => `"s${step}_${i}":${i}`).join(',')}}`;
    const per = 6_000;
    const { steps, skipped } = parse('jsonl', [line(1, per), line(2, per), line(3, per), '{"step":4,"loss":0.25,"s1_0":7}']);
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
    expect(Object.keys(steps[0].values)).toHaveLength(per + 1);
    // Step 2 fills the run up to the bound; step 3's new keys are all past it; known keys still arrive.
    expect(Object.keys(steps[1].values)).toHaveLength(MAX_RUN_KEYS - per);
    expect(steps[2].values).toEqual({ loss: 0.5 });
    expect(steps[3].values).toEqual({ loss: 0.25, s1_0: 7 });
    expect(skipped).toEqual({ [SKIP_KEYS_PAST_RUN_LIMIT]: 3 * per + 1 - MAX_RUN_KEYS });
  });

  it('a CSV header with more columns than a record may carry keeps the first MAX_RECORD_KEYS, saying so', () => {
    const n = MAX_RECORD_KEYS + 5;
    const steps: SourceStep[] = [];
    const p = createLineParser('csv', (s) => steps.push(s));
    p.push(`step,${Array.from({ length: n }, (_, i) => `c${i}`).join(',')}`);
    for (const step of [1, 2]) p.push(`${step},${Array.from({ length: n }, () => '0.5').join(',')}`);
    p.end();
    expect(steps.map((s) => s.step)).toEqual([1, 2]);
    expect(Object.keys(steps[0].values)).toHaveLength(MAX_RECORD_KEYS);
    expect(steps[0].values[`c${MAX_RECORD_KEYS - 1}`]).toBe(0.5);
    expect(steps[0].values[`c${MAX_RECORD_KEYS}`]).toBeUndefined();
    expect(p.meta.notes).toContain(
      `5 column(s) past the first ${MAX_RECORD_KEYS} left out (a record carries at most ${MAX_RECORD_KEYS} values)`,
    );
  });

  it("trainer_state.json's log_history is bounded per run the same way, and counted", () => {
    const entry = (step: number) => ({
      step,
      loss: 0.5,
      ...Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`s${step}_${i}`, i])),
    });
    const steps: SourceStep[] = [];
    const { skipped } = parseTrainerState(JSON.stringify({ log_history: [entry(1), entry(2)] }), (s) => steps.push(s));
    expect(steps.map((s) => s.step)).toEqual([1, 2]);
    expect(skipped[SKIP_KEYS_PAST_RUN_LIMIT]).toBe(2 * 6_000 + 1 - MAX_RUN_KEYS);
  });
});
