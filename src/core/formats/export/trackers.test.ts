import { describe, expect, it } from 'vitest';
import { createWandbParser } from '../wandb';
import type { SourceStep } from '../types';
import { flattenConfig, mlflowKey, pythonFloat, wandbNumberJson, wandbRunChunks, wandbRunFolder, wandbRunId } from './trackers';

describe('tracker export helpers', () => {
  it("pythonFloat spells numbers as Python's repr does (what MLflow's file store writes)", () => {
    expect([1, -2, 0.1, 1e-7, 2.5e-10, 1.7976931348623157e308, NaN, Infinity, -Infinity].map(pythonFloat)).toEqual([
      '1.0',
      '-2.0',
      '0.1',
      '1e-07',
      '2.5e-10',
      '1.7976931348623157e+308',
      'nan',
      'inf',
      '-inf',
    ]);
  });
  it("mlflowKey writes '@' as verl's '_at_' and replaces what MLflow refuses", () => {
    expect(mlflowKey('val-core/gsm8k/reward/mean@1')).toBe('val-core/gsm8k/reward/mean_at_1');
    expect(mlflowKey('actor/lr(1e-4)')).toBe('actor/lr_1e-4_');
  });
  it('wandbRunId is 8 lowercase letters/digits, the same for the same lab run and different for others', () => {
    const a = wandbRunId('20261204-sokoban-sampo-abc');
    expect(a).toMatch(/^[a-z0-9]{8}$/);
    expect(wandbRunId('20261204-sokoban-sampo-abc')).toBe(a);
    expect(wandbRunId('20261204-sokoban-sampo-abd')).not.toBe(a);
    expect(wandbRunFolder('2026-12-04T23:16:37.120Z', a)).toBe(`offline-run-20261204_231637-${a}`);
  });
  it("flattenConfig joins keys with '/' and writes values as Python's str() would", () => {
    expect(flattenConfig({ a: { b: 1, c: 0.5, d: true }, e: null, f: [1, 2], g: 'x' })).toEqual({
      'a/b': '1',
      'a/c': '0.5',
      'a/d': 'True',
      e: 'None',
      f: '[1,2]',
      g: 'x',
    });
  });
  it("wandbNumberJson uses W&B's tokens for non-finite values", () => {
    expect([0.25, NaN, Infinity, -Infinity].map(wandbNumberJson)).toEqual(['0.25', 'NaN', 'Infinity', '-Infinity']);
  });
  it('a .wandb export streamed in chunks reads back through the parser', () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({ step: i, values: { a: i / 7, b: i === 5 ? NaN : -i } }));
    const steps: SourceStep[] = [];
    const p = createWandbParser((s) => steps.push(s));
    let chunks = 0;
    for (const c of wandbRunChunks(
      { id: 'r', name: 'n', tags: [], startedAt: '2026-01-01T00:00:00Z', completed: false, config: { x: 1 } },
      records,
      { keys: ['a', 'b'], project: 'p', wandbId: 'abcdefgh', producer: 't' },
    )) {
      p.push(c);
      chunks++;
    }
    p.end();
    expect(chunks).toBeGreaterThan(1);
    expect(steps.length).toBe(3000);
    expect(steps[2999].values).toEqual({ a: 2999 / 7, b: -2999 });
    expect(steps[5].values.b).toBeNaN();
    expect(p.meta.run).toMatchObject({ id: 'abcdefgh', name: 'n', project: 'p', state: 'failed', exitCode: 1 });
    expect(p.meta.config).toEqual({ x: 1 });
  });
});
