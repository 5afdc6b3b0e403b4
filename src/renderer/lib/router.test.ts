import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute, type Route } from './router';

describe('routes', () => {
  it('round-trips every view', () => {
    const routes: Route[] = [
      { view: 'runs' },
      { view: 'new' },
      { view: 'run', id: 'r_1-a' },
      { view: 'compare', ids: ['a', 'b'] },
      { view: 'compare', ids: [] },
      { view: 'alerts' },
      { view: 'cluster' },
      { view: 'about' },
    ];
    for (const r of routes) expect(parseRoute(formatRoute(r))).toEqual(r);
  });
  it('falls back to the runs view on anything unknown or malformed', () => {
    expect(parseRoute('')).toEqual({ view: 'runs' });
    expect(parseRoute('?view=nope')).toEqual({ view: 'runs' });
    expect(parseRoute('?view=run&id=../etc')).toEqual({ view: 'runs' });
  });
  it('opens a run at a metric and step (an alert link), dropping a malformed metric or step', () => {
    const r: Route = { view: 'run', id: 'r1', metric: 'grad/norm', step: 40 };
    expect(formatRoute(r)).toBe('?view=run&id=r1&metric=grad%2Fnorm&step=40');
    expect(parseRoute(formatRoute(r))).toEqual(r);
    expect(parseRoute('?view=run&id=r1&metric=grad/norm&step=-3')).toEqual({ view: 'run', id: 'r1', metric: 'grad/norm' });
    expect(parseRoute('?view=run&id=r1&metric=%3Cscript%3E&step=4')).toEqual({ view: 'run', id: 'r1' });
  });
  it('drops malformed and duplicate compare ids', () => {
    expect(parseRoute('?view=compare&runs=a,b,a,%2F,')).toEqual({ view: 'compare', ids: ['a', 'b'] });
  });
});
