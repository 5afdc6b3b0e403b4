import { describe, expect, it } from 'vitest';
import { layoutLegend, pngLegend } from './chartPng';

const line = (name: string, color: string, faint = false) => ({ name, color, x: [], y: [], smoothed: null, nonFinite: [], faint });
const band = (name: string, color: string) => ({ name, color, x: [], mean: [], lo: [], hi: [], n: [] });

describe('pngLegend', () => {
  it('names the runs drawn, the groups when grouping, and nothing for a single series', () => {
    expect(pngLegend({ lines: [line('a', '#111'), line('b', '#222')] })).toEqual([
      { name: 'a', color: '#111' },
      { name: 'b', color: '#222' },
    ]);
    expect(
      pngLegend({
        lines: [line('a', '#111', true), line('b', '#222', true)],
        bands: [band('preset = sampo (N=2)', '#333'), band('preset = grpo (N=1)', '#444')],
      }),
    ).toEqual([
      { name: 'preset = sampo (N=2)', color: '#333' },
      { name: 'preset = grpo (N=1)', color: '#444' },
    ]);
    expect(pngLegend({ lines: [line('a', '#111')] })).toEqual([]);
  });
});

describe('layoutLegend', () => {
  const measure = (t: string) => 7 * t.length;
  it('flows entries in rows within the width and sizes the strip', () => {
    const entries = ['run one', 'run two', 'run three'].map((name) => ({ name, color: '#000' }));
    // 8 padding + (10 + 4 + 49) = 71, then + 16 gap: the second starts at 87 and ends at 150.
    const wide = layoutLegend(entries, 400, 1, measure);
    expect(wide.items.map((i) => [i.x, i.y])).toEqual([
      [8, 8],
      [87, 8],
      [166, 8],
    ]);
    expect(wide.height).toBe(8 + 18 - 6 + 8);
    const narrow = layoutLegend(entries, 160, 1, measure);
    expect(narrow.items.map((i) => [i.x, i.y])).toEqual([
      [8, 8],
      [87, 8],
      [8, 26],
    ]);
    expect(narrow.height).toBe(16 + 2 * 18 - 6);
    expect(layoutLegend(entries, 800, 2, (t) => 2 * measure(t)).height).toBe(2 * wide.height);
    expect(layoutLegend([], 400, 1, measure)).toEqual({ items: [], height: 0 });
  });
});
