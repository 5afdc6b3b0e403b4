import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute } from './router';

describe('router: the Study view and Compare grouped by a config path', () => {
  it('round-trips ?view=studies and compare with a group', () => {
    expect(parseRoute(formatRoute({ view: 'studies' }))).toEqual({ view: 'studies' });
    const r = { view: 'compare' as const, ids: ['a', 'b'], group: 'preset' };
    expect(formatRoute(r)).toBe('?view=compare&runs=a,b&group=preset');
    expect(parseRoute(formatRoute(r))).toEqual(r);
  });

  it('ignores a malformed group, keeps the runs', () => {
    expect(parseRoute('?view=compare&runs=a,b&group=%3Cscript%3E')).toEqual({ view: 'compare', ids: ['a', 'b'] });
    expect(formatRoute({ view: 'compare', ids: ['a'], group: 'x y' })).toBe('?view=compare&runs=a');
  });
});
