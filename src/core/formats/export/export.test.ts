import { describe, expect, it } from 'vitest';
import type { MetricRecord } from '../../../shared/metrics';
import { createLineParser, detectFormat } from '../index';
import type { LogFormat, SourceStep } from '../types';
import { csvCell, csvChunks } from './csv';
import { CHUNK_BYTES, exportableKeys } from './keys';
import { verlJsonlChunks } from './verlJsonl';

const records: MetricRecord[] = [
  { step: 0, values: { 'actor/entropy': 0.1 + 0.2, 'critic/score/mean': 0.1, 'val/acc': Number.NaN, unused: Number.NaN } },
  { step: 1, values: { 'actor/entropy': Number.NaN, 'critic/score/mean': 1 / 3, unused: Number.NaN } },
  { step: 2, values: { 'actor/entropy': Number.POSITIVE_INFINITY, 'critic/score/mean': -1e-300, 'val/acc': 0.5, unused: Number.NaN } },
  { step: 3, values: { 'actor/entropy': Number.NEGATIVE_INFINITY, 'critic/score/mean': 5e-324, 'val/acc': 2 ** 60, unused: Number.NaN } },
];

function reimport(format: LogFormat, text: string): SourceStep[] {
  const steps: SourceStep[] = [];
  const p = createLineParser(format, (s) => steps.push(s));
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) p.push(l);
  p.end();
  expect(p.skipped, `${format} re-import skipped lines`).toEqual({});
  return steps;
}

/** Every exported value as (step, key) → value, for exact comparison (NaN equals NaN under toEqual). */
const expected = records.map((r) => ({
  step: r.step,
  values: Object.fromEntries(Object.entries(r.values).filter(([k]) => k !== 'unused')),
}));

describe('exportableKeys', () => {
  it('keeps keys with any non-NaN value, in first-seen order', () => {
    expect(exportableKeys(records)).toEqual(['actor/entropy', 'critic/score/mean', 'val/acc']);
  });
});

describe('CSV export', () => {
  it('writes a step column, empty cells where absent, NaN/inf spelled, and re-imports to the same doubles', () => {
    const text = [...csvChunks(records)].join('');
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('step,actor/entropy,critic/score/mean,val/acc');
    expect(lines[1]).toBe('0,0.30000000000000004,0.1,NaN');
    expect(lines[2]).toBe('1,NaN,0.3333333333333333,');
    expect(lines[3]).toBe('2,inf,-1e-300,0.5');
    const head = new TextEncoder().encode(text);
    expect(detectFormat(head, 'export.csv')?.format).toBe('csv');
    const back = reimport('csv', text);
    expect(back.map((s) => ({ step: s.step, values: s.values }))).toEqual(expected);
  });

  it('quotes header cells that hold commas or quotes', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('plain/key')).toBe('plain/key');
    const text = [...csvChunks([{ step: 1, values: { 'a,b': 2 } }])].join('');
    expect(reimport('csv', text).map((s) => s.values)).toEqual([{ 'a,b': 2 }]);
  });

  it('refuses a metric named step, which would collide with the step column', () => {
    expect(() => [...csvChunks([{ step: 1, values: { step: 2 } }])]).toThrow(/collide with the CSV step column/);
  });

  it('streams: a long run arrives in many chunks of bounded size', () => {
    const many = Array.from({ length: 20_000 }, (_, i) => ({ step: i, values: { a: i / 7, b: Math.sqrt(i) } }));
    const chunks = [...csvChunks(many)];
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.length).toBeLessThan(CHUNK_BYTES + 200);
  });
});

describe('verl file-logger JSONL export', () => {
  it('writes verl\'s compact {"step":N,"data":{…}} lines, NaN as null, ±inf as ±1e999, and re-imports exactly', () => {
    const text = [...verlJsonlChunks(records)].join('');
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('{"step":0,"data":{"actor/entropy":0.30000000000000004,"critic/score/mean":0.1,"val/acc":null}}');
    expect(lines[1]).toBe('{"step":1,"data":{"actor/entropy":null,"critic/score/mean":0.3333333333333333}}');
    expect(lines[2]).toBe('{"step":2,"data":{"actor/entropy":1e999,"critic/score/mean":-1e-300,"val/acc":0.5}}');
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
    expect(detectFormat(new TextEncoder().encode(text), 'x.jsonl')?.format).toBe('verl-jsonl');
    const back = reimport('verl-jsonl', text);
    expect(back.map((s) => ({ step: s.step, values: s.values }))).toEqual(expected);
  });
});
