/**
 * A JSON line nested 5,000 deep or carrying 20,000 values is one bad record: skipped and counted, the rest of the
 * file imported (hardening round three: it aborted the whole import with "Maximum call stack size exceeded").
 */
import { describe, expect, it } from 'vitest';
import { createLineParser, type SourceStep } from './index';
import { MAX_RECORD_DEPTH, MAX_RECORD_KEYS } from './steps';

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
});
