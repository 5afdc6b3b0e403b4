/**
 * docs/guides/llm.md's "Precision: what runs in which" table against
 * the code it names: every row cites a source file of this repository, the rollout precisions it lists are the
 * config's, the loader widens bf16 / fp16 exactly as the table says, and tfjs has no half-precision dtype (why the
 * guide offers no training-precision knob).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { FIELDS_BY_PATH } from '../../src/core/config/fields';
import { toFloat32 } from '../../src/core/llm/safetensors';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GUIDE = join(ROOT, 'docs', 'guides', 'llm.md');

/** The section's what / precision / source table, as rows of cells. */
function precisionTable(): string[][] {
  const text = readFileSync(GUIDE, 'utf8');
  const start = text.indexOf('\n## Precision: what runs in which\n');
  expect(start, 'docs/guides/llm.md has a "Precision: what runs in which" section').toBeGreaterThan(0);
  const section = text.slice(start + 1, text.indexOf('\n## ', start + 1));
  // The first table of the section (the backend table follows it).
  const all = section.split('\n');
  const head = all.indexOf('| what | precision | source |');
  expect(head, 'the section has a | what | precision | source | table').toBeGreaterThan(0);
  const end = all.findIndex((l, i) => i > head && !l.startsWith('|'));
  const lines = all.slice(head, end);
  return lines.slice(2).map((l) =>
    l
      .slice(1, -1)
      .split(' | ')
      .map((c) => c.trim()),
  );
}

describe('docs/guides/llm.md: Precision: what runs in which', () => {
  it('every row names where the fact comes from: files of this repository', () => {
    const rows = precisionTable();
    expect(rows.length).toBeGreaterThanOrEqual(10);
    for (const [what, precision, source] of rows) {
      expect(precision, what).not.toBe('');
      const files = [...source.matchAll(/\]\(\.\.\/\.\.\/(src\/[^)]+)\)/g)].map((m) => m[1]);
      expect(files.length, `row "${what}" cites a source file`).toBeGreaterThan(0);
      for (const f of files) expect(existsSync(join(ROOT, f)), `${f} (row "${what}")`).toBe(true);
    }
  });

  it("has a row for each of compute.rolloutPrecision's choices, and only those", () => {
    const choices = FIELDS_BY_PATH.get('compute.rolloutPrecision')!.choices!;
    const named = new Set(precisionTable().flatMap(([what]) => [...what.matchAll(/rolloutPrecision=(\w+)/g)].map((m) => m[1])));
    expect([...named].sort()).toEqual([...choices].sort());
  });

  it('the loader widens bf16 and fp16 to float32 exactly, as the table says', () => {
    const loading = precisionTable().find(([what]) => what.includes('model.safetensors'))!;
    expect(loading[1]).toMatch(/float32, exactly/);
    // 1 + 2^-7 is exact in bf16 (0x3F81) and fp16 (0x3C02): widened without rounding.
    expect(toFloat32(new Uint8Array([0x81, 0x3f]), 'BF16')[0]).toBe(1 + 2 ** -7);
    expect(toFloat32(new Uint8Array([0x02, 0x3c]), 'F16')[0]).toBe(1 + 2 ** -9);
  });

  it('tfjs has no half-precision dtype, so training stays float32 (no knob)', () => {
    for (const dtype of ['float16', 'bfloat16']) expect(() => tf.tensor([1], [1], dtype as tf.DataType)).toThrow(/Unknown data type/);
  });
});
