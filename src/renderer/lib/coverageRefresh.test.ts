import { describe, expect, it } from 'vitest';
import { coverageIsStale, CoverageRefresher, grownKeys, newKeys, STALE_RETRIES, unionKeys } from './coverageRefresh';

type Row = { rule: string; applicable: boolean; missing: string[] };

/** A store that answers from the keys it holds, like runs.detect coverageOnly: entropy needs actor/entropy. */
function answer(stored: ReadonlySet<string>): Row[] {
  return [
    { rule: 'non_finite', applicable: stored.size > 0, missing: stored.size > 0 ? [] : ['any metric'] },
    { rule: 'entropy_shift', applicable: stored.has('actor/entropy'), missing: stored.has('actor/entropy') ? [] : ['actor/entropy'] },
  ];
}

describe('newKeys', () => {
  it('lists the keys the records add, once each, in first-seen order', () => {
    const have = new Set(['a']);
    expect(newKeys(have, [{ values: { a: 1, b: null } }, { values: { c: 2, b: 3 } }])).toEqual(['b', 'c']);
    expect(newKeys(have, [{ values: { a: 1 } }])).toEqual([]);
    expect([...have]).toEqual(['a']);
  });
});

describe('coverageIsStale', () => {
  it('is true when a rule is said not applicable for want of a key the view has seen', () => {
    expect(coverageIsStale(answer(new Set()), new Set(['x']))).toBe(true);
    expect(coverageIsStale(answer(new Set(['x'])), new Set(['x', 'actor/entropy']))).toBe(true);
    expect(coverageIsStale(answer(new Set(['x'])), new Set(['x']))).toBe(false);
    expect(coverageIsStale(answer(new Set()), new Set())).toBe(false);
  });
});

describe('CoverageRefresher', () => {
  it('asks again only when the key set grows, and the list follows a live run from 0 rules to all', async () => {
    const stored = new Set<string>();
    const known = new Set<string>();
    let calls = 0;
    let shown: Row[] = answer(stored);
    const r = new CoverageRefresher<Row>(
      async () => (calls++, answer(stored)),
      () => known,
      (rows) => (shown = rows),
      async () => {},
    );
    // The view opened before the run logged anything: its answer (0 applicable) was asked with 0 keys.
    r.seed(0);
    expect(shown.filter((c) => c.applicable)).toHaveLength(0);
    expect(r.keysChanged(0)).toBeNull();
    stored.add('loss');
    known.add('loss');
    await r.keysChanged(1);
    expect(calls).toBe(1);
    expect(shown.map((c) => c.applicable)).toEqual([true, false]);
    // The same key count again (a step with no new key): no request.
    expect(r.keysChanged(1)).toBeNull();
    expect(calls).toBe(1);
    stored.add('actor/entropy');
    known.add('actor/entropy');
    await r.keysChanged(2);
    expect(calls).toBe(2);
    expect(shown.map((c) => c.applicable)).toEqual([true, true]);
  });

  it('folds growth during a request into one follow-up, never two requests at once', async () => {
    const known = new Set<string>();
    let open = 0;
    let most = 0;
    let calls = 0;
    let release: () => void = () => {};
    const r = new CoverageRefresher<Row>(
      async () => {
        calls++;
        open++;
        most = Math.max(most, open);
        await new Promise<void>((res) => (release = res));
        open--;
        return answer(known);
      },
      () => known,
      () => {},
      async () => {},
    );
    r.seed(0);
    known.add('a');
    const p = r.keysChanged(1)!;
    for (const [i, k] of ['b', 'c', 'actor/entropy'].entries()) {
      known.add(k);
      expect(r.keysChanged(2 + i)).toBe(p);
    }
    release();
    await new Promise((res) => setTimeout(res, 0));
    release();
    await p;
    expect(calls).toBe(2);
    expect(most).toBe(1);
  });

  it('asks a stale answer again (the store had not written the records yet), a bounded number of times', async () => {
    const stored = new Set<string>();
    const known = new Set(['actor/entropy']);
    let calls = 0;
    let shown: Row[] = [];
    const r = new CoverageRefresher<Row>(
      async () => {
        calls++;
        // The store catches up after the view's second request.
        if (calls === 2) stored.add('actor/entropy');
        return answer(stored);
      },
      () => known,
      (rows) => (shown = rows),
      async () => {},
    );
    r.seed(0);
    await r.keysChanged(1);
    expect(calls).toBe(2);
    expect(shown.every((c) => c.applicable)).toBe(true);
    // A store that never catches up: STALE_RETRIES more requests, then it waits for the next new key.
    const never = new CoverageRefresher<Row>(
      async () => (calls++, answer(new Set())),
      () => known,
      () => {},
      async () => {},
    );
    calls = 0;
    never.seed(0);
    await never.keysChanged(1);
    expect(calls).toBe(1 + STALE_RETRIES);
  });
});

describe('CoverageRefresher.recheck', () => {
  it('asks again when the answer from opening is stale though no key arrived since, a bounded number of times', async () => {
    const known = new Set(['actor/entropy']);
    let calls = 0;
    const r = new CoverageRefresher<Row>(
      async () => (calls++, answer(new Set())),
      () => known,
      () => {},
      async () => {},
    );
    r.seed(1);
    expect(r.keysChanged(1)).toBeNull();
    await r.recheck(1);
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(1 + STALE_RETRIES);
    const before = calls;
    for (let i = 0; i < 5; i++) await r.recheck(1);
    expect(calls - before).toBeLessThanOrEqual(STALE_RETRIES);
  });
});

describe('grownKeys / unionKeys', () => {
  it('returns the sorted list with the new keys, or null when nothing is new', () => {
    expect(grownKeys(['b'], [{ values: { c: 1, a: null } }, { values: { b: 2 } }])).toEqual(['a', 'b', 'c']);
    expect(grownKeys(['a', 'b'], [{ values: { a: 1 } }])).toBeNull();
    expect(unionKeys(['x'], ['y', 'x'])).toEqual(['x', 'y']);
    expect(unionKeys(['x', 'y'], ['y'])).toBeNull();
  });
});
