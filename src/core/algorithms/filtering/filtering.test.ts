import { describe, expect, it } from 'vitest';
import { finishFiltering, offerRound, overlongPenalty, startFiltering, type FilterParams, type RolledGroup } from './index';

const P: FilterParams = { enabled: true, maxRounds: 3, coldStartSteps: 2, targetGroups: 3 };
const grp = (uid: string, returns: number[]): RolledGroup<string> => ({ uid, returns, data: uid });
const U = (uid: string) => grp(uid, [1, 1, 1]); // uniform
const I = (uid: string) => grp(uid, [0, 1, 1]); // informative

function drive(step: number, rounds: RolledGroup<string>[][], p = P) {
  let st = startFiltering<string>(step, p);
  let used = 0;
  for (const r of rounds) {
    used++;
    const out = offerRound(st, r);
    st = out.state;
    if (out.done) break;
  }
  return { used, ...finishFiltering(st) };
}

describe('dynamic filtering (DAPO over-sampling)', () => {
  it('during cold start (step ≤ coldStartSteps) the first round is kept as is', () => {
    const r = drive(2, [[U('a'), I('b'), U('c')]]);
    expect(r.groups.map((g) => g.uid)).toEqual(['a', 'b', 'c']);
    expect(r.metrics['filter/rounds']).toBe(1);
    expect(r.metrics['filter/zero_variance_share']).toBeCloseTo(2 / 3, 12);
  });

  it('disabled: one round, everything kept', () => {
    const r = drive(10, [[U('a'), U('b'), U('c')]], { ...P, enabled: false });
    expect(r.groups.length).toBe(3);
  });

  it('drops uniform groups, accumulates across rounds, truncates the overshoot to whole groups', () => {
    const r = drive(3, [[U('a'), I('b'), U('c')], [I('d'), I('e'), I('f')], [I('x')]]);
    expect(r.used).toBe(2);
    expect(r.groups.map((g) => g.uid)).toEqual(['b', 'd', 'e']);
    expect(r.metrics['filter/rounds']).toBe(2);
    expect(r.metrics['filter/zero_variance_share']).toBeCloseTo(2 / 6, 12);
  });

  it('last round tops up: informative first, then uniform in rollout order', () => {
    const r = drive(3, [
      [U('a'), U('b'), U('c')],
      [U('d'), U('e'), U('f')],
      [U('g'), I('h'), U('i')],
    ]);
    expect(r.used).toBe(3);
    expect(r.groups.map((g) => g.uid)).toEqual(['h', 'g', 'i']);
  });

  it('uniformity is judged on the raw returns as given (exact equality)', () => {
    const r = drive(3, [[grp('a', [1, 1.0000001]), U('b'), U('c')], [U('d')], [U('e'), U('f')]]);
    expect(r.groups[0].uid).toBe('a');
  });

  it('refuses misuse with a clear message', () => {
    expect(() => startFiltering(1, { ...P, maxRounds: 0 })).toThrow(/maxRounds/);
    const st = startFiltering<string>(1, P);
    expect(() => finishFiltering(st)).toThrow(/before the batch was complete/);
    const done = offerRound(st, [U('a')]).state;
    expect(() => offerRound(done, [U('b')])).toThrow(/after the batch was complete/);
  });
});

describe('overlong shaping', () => {
  it('0 up to max − L_b, then linear down to −factor at max (reference: 512 → buffer 102)', () => {
    expect(overlongPenalty(400, 512, 0.2, 0.1)).toBe(0);
    expect(overlongPenalty(410, 512, 0.2, 0.1)).toBe(0);
    expect(overlongPenalty(461, 512, 0.2, 0.1)).toBeCloseTo(-0.05, 12);
    expect(overlongPenalty(512, 512, 0.2, 0.1)).toBeCloseTo(-0.1, 12);
    expect(overlongPenalty(10, 4, 0.2, 0.1)).toBe(0); // buffer ⌊0.8⌋ = 0: shaping off
  });
});
