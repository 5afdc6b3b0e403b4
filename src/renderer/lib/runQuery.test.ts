import { describe, expect, it } from 'vitest';
import { summaryRun as run } from '../testing/runSummary';
import { isQuery, matchesQuery, parseQuery, queryFields } from './runQuery';

const runs = [
  run({ id: 'a', preset: 'sampo', summary: { 'val/success_rate': 0.55 }, tags: ['base'] }),
  run({ id: 'b', preset: 'sampo', summary: { 'val/success_rate': 0.3 } }),
  run({ id: 'c', preset: 'grpo', summary: { 'val/success_rate': 0.7 }, notes: 'lr 0.05 too high: Entropy collapsed at step 70' }),
  run({ id: 'verl', kind: 'imported', preset: 'gae', env: 'gsm8k', seedKnown: false, summary: { 'val/score_mean': 0.821 } }),
];
const ids = (q: string) => {
  const p = parseQuery(q);
  if ('error' in p) throw new Error(p.error);
  return runs.filter((r) => matchesQuery(r, p.clauses)).map((r) => r.id);
};

describe('runs table query', () => {
  it('filters on run fields and any headline number, clauses joined by and', () => {
    expect(ids('preset = sampo and val/success_rate > 0.4')).toEqual(['a']);
    expect(ids('val/success_rate >= 0.3')).toEqual(['a', 'b', 'c']);
    expect(ids('val/score_mean > 0.8')).toEqual(['verl']);
    expect(ids('kind = imported')).toEqual(['verl']);
    expect(ids('preset != sampo and env ~ gsm')).toEqual(['verl']);
    expect(ids('tag = base')).toEqual(['a']);
    // A run without the number: no comparison matches it; "seed = 0" does not catch a seed the log never named.
    expect(ids('seed = 0')).toEqual(['a', 'b', 'c']);
    // Plain words still search.
    expect(ids('gsm8k')).toEqual(['verl']);
  });
  it('searches and filters on the notes written on runs', () => {
    expect(ids('entropy collapsed')).toEqual(['c']);
    expect(ids('notes ~ too high')).toEqual(['c']);
    expect(ids('notes != x')).toEqual(['a', 'b', 'c', 'verl']);
    expect(ids('preset = sampo and notes ~ collapsed')).toEqual([]);
  });
  it('says what it cannot read instead of matching nothing silently', () => {
    expect(parseQuery('val/success_rate > high')).toEqual({
      error: '“val/success_rate > high”: > compares numbers, and “high” is not one',
    });
    expect(parseQuery('preset =')).toMatchObject({ error: expect.stringContaining('has no value') });
    expect(isQuery('sampo seed 3')).toBe(false);
  });
  it("lists the fields a query can name, the runs' headline numbers included", () => {
    expect(queryFields(runs)).toEqual([
      'name',
      'id',
      'env',
      'preset',
      'status',
      'seed',
      'step',
      'tag',
      'kind',
      'notes',
      'val/score_mean',
      'val/success_rate',
    ]);
  });
});
