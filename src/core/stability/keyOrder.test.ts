/**
 * The detector and the non-finite rule remember, per position in a record, the key last seen there and its
 * history, so the maps are asked only when a position's key changes (an imported verl step carries ~140 keys in
 * the same order every step). Records whose keys come in another order, or with some keys missing, must give the
 * alerts the same values give in one fixed order: a position that kept a stale key's history would push values
 * into the wrong metric's window.
 */
import { describe, expect, it } from 'vitest';
import type { MetricRecord } from '../../shared/metrics';
import { detectAlerts } from './detector';
import { syntheticStream, type SyntheticShape } from './synthetic';

/** Each record's keys dropped (some steps) and reordered (rotated, reversed) by its index: deterministic. */
function shuffled(recs: readonly MetricRecord[]): { varied: MetricRecord[]; sorted: MetricRecord[] } {
  const varied: MetricRecord[] = [];
  const sorted: MetricRecord[] = [];
  recs.forEach((r, i) => {
    let keys = Object.keys(r.values).filter((_, j) => i % 4 === 0 || (i * 7 + j) % 9 !== 0);
    const by = i % keys.length;
    keys = [...keys.slice(by), ...keys.slice(0, by)];
    if (i % 3 === 0) keys.reverse();
    const v: Record<string, number> = {};
    for (const k of keys) v[k] = r.values[k];
    const s: Record<string, number> = {};
    for (const k of [...keys].sort()) s[k] = r.values[k];
    varied.push({ ...r, values: v });
    sorted.push({ ...r, values: s });
  });
  return { varied, sorted };
}

/**
 * What each alert says. A non-finite alert over several keys of one namespace is raised on the first of them in
 * the record and lists them in record order (by design): it is compared by its keys as a set; every other alert
 * by its metric, steps, message and evidence window.
 */
function gist(recs: readonly MetricRecord[]): string[] {
  return detectAlerts('r', recs)
    .map((a) => {
      const group = /^(\d+ metrics under \S+ became .*): (.*)\.$/.exec(a.message);
      if (a.rule === 'non_finite' && group)
        return JSON.stringify([a.rule, a.firstStep, a.lastStep, a.severity, group[1], group[2].split(', ').sort()]);
      return JSON.stringify([a.rule, a.metric, a.firstStep, a.lastStep, a.severity, a.message, a.evidence.steps, a.evidence.values]);
    })
    .sort();
}

describe('per-position key memory of the detector and the non-finite rule', () => {
  it.each<[SyntheticShape, number | undefined]>([
    ['cispo_collapse', 130],
    ['entropy_collapse', undefined],
    ['kl_drift', 140],
    ['calm', 100],
  ])('%s (NaN at %s): keys in any order, some missing, give the alerts of the same values in one order', (shape, nanAt) => {
    const recs = syntheticStream({ steps: 180, seed: 5, shape, collapseAt: 110, ...(nanAt !== undefined ? { nanAt } : {}) });
    const { varied, sorted } = shuffled(recs);
    const want = gist(sorted);
    expect(want.length).toBeGreaterThan(0);
    expect(gist(varied)).toEqual(want);
  });
});
