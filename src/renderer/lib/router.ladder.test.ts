import { describe, expect, it } from 'vitest';
import { LadderName } from '../../shared/ladders';
import { formatRoute, parseRoute } from './router';

describe('router: the Ladder view', () => {
  it('round-trips ?view=ladder with and without a ladder name', () => {
    expect(formatRoute({ view: 'ladder' })).toBe('?view=ladder');
    expect(parseRoute('?view=ladder')).toEqual({ view: 'ladder' });
    const r = { view: 'ladder' as const, name: 'ladder-sokoban.v2' };
    expect(formatRoute(r)).toBe('?view=ladder&name=ladder-sokoban.v2');
    expect(parseRoute(formatRoute(r))).toEqual(r);
    const committed = { view: 'ladder' as const, name: 'ladder-sokoban', committed: true };
    expect(formatRoute(committed)).toBe('?view=ladder&name=ladder-sokoban&source=committed');
    expect(parseRoute(formatRoute(committed))).toEqual(committed);
    expect(parseRoute('?view=ladder&name=x&source=elsewhere')).toEqual({ view: 'ladder', name: 'x' });
    expect(parseRoute('?view=ladder&source=committed')).toEqual({ view: 'ladder' });
  });

  it('drops a name that cannot be a ladder, keeps the view', () => {
    expect(parseRoute('?view=ladder&name=%3Cscript%3E')).toEqual({ view: 'ladder' });
    expect(parseRoute('?view=ladder&name=-x')).toEqual({ view: 'ladder' });
    expect(formatRoute({ view: 'ladder', name: '../x' })).toBe('?view=ladder');
  });

  it('accepts in the address exactly the names the API accepts as a ladder', () => {
    for (const name of ['tiny', 'ladder-sokoban.v2', 'A_1', 'x'.repeat(40), 'x'.repeat(41), '-x', '.x', 'a b', 'a/b', '', 'é']) {
      const inAddress = 'name' in parseRoute(`?view=ladder&name=${encodeURIComponent(name)}`);
      expect(inAddress, name).toBe(LadderName.safeParse(name).success);
    }
  });
});
