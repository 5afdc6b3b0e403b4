import { describe, expect, it } from 'vitest';
import { defaultScatterAxes, scatterKeys, scatterModel } from './scatterPanel';

const runs: { id: string; name: string; summary: Record<string, number | null> }[] = [
  {
    id: 'a',
    name: 'min',
    summary: { 'val/score_mean': 0.821, 'best/val/score_mean': 0.874, 'actor/entropy': 0.026, 'episode/score_mean': 0.93 },
  },
  { id: 'b', name: 'recommended', summary: { 'val/score_mean': 0.881, 'actor/entropy': 0.676, 'episode/score_mean': null } },
];

describe('scatter of headline numbers across runs', () => {
  it('offers keys some run has a value for, validation first', () => {
    expect(scatterKeys(runs)).toEqual(['best/val/score_mean', 'val/score_mean', 'episode/score_mean', 'actor/entropy']);
    expect(defaultScatterAxes(scatterKeys(runs))).toEqual({ x: 'val/score_mean', y: 'best/val/score_mean' });
    expect(defaultScatterAxes(['only'])).toBeNull();
  });
  it('puts one point per run at its two values and lists the runs lacking one', () => {
    const m = scatterModel(
      runs,
      new Map([
        ['a', '#111'],
        ['b', '#222'],
      ]),
      'actor/entropy',
      'val/score_mean',
      false,
    );
    expect(m.input.lines.map((l) => [l.name, l.x, l.y, l.color, l.marker])).toEqual([
      ['min', [0.026], [0.821], '#111', true],
      ['recommended', [0.676], [0.881], '#222', true],
    ]);
    expect(m.input.xKind).toBe('value');
    expect(scatterModel(runs, new Map(), 'episode/score_mean', 'val/score_mean', true).missing).toEqual(['recommended']);
  });
});
