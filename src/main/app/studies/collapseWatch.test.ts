/**
 * Stop-on-collapse's watch: it names the collapse step the ladder's statistics give the whole stream (the batch
 * detector + collapseStep), as soon as the records up to that step have arrived, in any batching; and the run
 * record's reason carries the step.
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig, type RunConfig } from '../../../core/config/index';
import { detectAlerts } from '../../../core/stability/detector';
import { recipeOf } from '../../../core/stability/hints';
import { syntheticStream } from '../../../core/stability/synthetic';
import { collapseStep, firstCriticalStep } from '../../../core/stats/index';
import type { MetricRecord } from '../../../shared/metrics';
import { toWireRecord } from '../../../shared/nonFinite';
import { fromWireRecord } from '../trainRun';
import { CollapseWatch, collapseStopStep } from './collapseWatch';

const config = (): RunConfig => {
  const { config: c } = resolveConfig('cispo', 'sokoban', {});
  return c!;
};

/** The ladder's collapse step of a whole stored stream (what ladder.ts ladderRun computes). */
function statsCollapse(records: readonly MetricRecord[], fraction: number): number | null {
  const alerts = detectAlerts('r', records, undefined, recipeOf(config()));
  const vals = records.map((m) => [m.step, m.values['val/success_rate']] as [number, number]).filter(([, v]) => Number.isFinite(v));
  return collapseStep(firstCriticalStep(alerts), vals, fraction);
}

const rec = (step: number, val: number | null): MetricRecord => ({
  step,
  values: { 'episode/success_rate': 0.5, 'val/success_rate': val === null ? Number.NaN : val },
});

describe('CollapseWatch', () => {
  it('a held-out fall below fraction × the step-0 validation: the first validation under it, not before', () => {
    const w = new CollapseWatch('r', config(), 0.5);
    // step-0 validation 0.40 → collapse below 0.20; 0.21 at step 10 is not yet, 0.15 at step 20 is
    const stream = [rec(0, 0.4), rec(1, null), rec(5, 0.3), rec(10, 0.21), rec(15, null), rec(20, 0.15), rec(25, 0.05)];
    const seen = stream.map((r) => w.feed([r])?.step ?? null);
    expect(seen).toEqual([null, null, null, null, null, 20, 20]);
    expect(w.collapse!.reason).toBe('collapsed at step 20 (held-out success 0.150 < 0.5 × 0.400, the step-0 validation)');
    expect(collapseStopStep(w.collapse!.reason)).toBe(20);
    expect(statsCollapse(stream, 0.5)).toBe(20);
  });

  it('a stream that never falls nor alerts has no collapse', () => {
    const w = new CollapseWatch('r', config(), 0.5);
    expect(w.feed(syntheticStream({ steps: 60, seed: 4, shape: 'calm' }))).toBeNull();
    expect(statsCollapse(syntheticStream({ steps: 60, seed: 4, shape: 'calm' }), 0.5)).toBeNull();
  });

  for (const [shape, seed] of [
    ['cispo_collapse', 2],
    ['cispo_collapse', 7],
    ['entropy_collapse', 3],
    ['length_runaway', 5],
  ] as const) {
    it(`${shape} seed ${seed}: the first step it reports is the whole stream's collapse step, in batches of 1, 3 and 8`, () => {
      const full = syntheticStream({ steps: 120, seed, shape, collapseAt: 70 });
      const expected = statsCollapse(full, 0.5);
      expect(expected).not.toBeNull();
      for (const batch of [1, 3, 8]) {
        const w = new CollapseWatch('r', config(), 0.5);
        let found: { step: number; through: number } | null = null;
        for (let i = 0; i < full.length && !found; i += batch) {
          const chunk = full.slice(i, i + batch);
          const p = w.feed(chunk);
          if (p) found = { step: p.step, through: chunk[chunk.length - 1].step };
        }
        expect(found, `batch ${batch}`).not.toBeNull();
        expect(found!.step, `batch ${batch}`).toBe(expected);
        // Stopped there, the stored stream (up to `through`, maybe a few steps more) gives the same step.
        expect(statsCollapse(full.slice(0, found!.through), 0.5)).toBe(expected);
        expect(w.collapse!.reason).toMatch(new RegExp(`^collapsed at step ${expected} \\(`));
      }
    });
  }

  it('steps sent again (a resumed run re-logs the steps after its checkpoint) replace the first ones', () => {
    const full = syntheticStream({ steps: 120, seed: 2, shape: 'cispo_collapse', collapseAt: 70 });
    const once = new CollapseWatch('r', config(), 0.5);
    const twice = new CollapseWatch('r', config(), 0.5);
    let a = null;
    let b = null;
    for (let i = 0; i < full.length; i += 5) a ??= once.feed(full.slice(i, i + 5));
    twice.feed(full.slice(0, 60));
    for (let i = 40; i < full.length; i += 5) b ??= twice.feed(full.slice(i, i + 5));
    expect(b).toEqual(a);
  });

  it('event records come back as logged: NaN and ±Infinity survive the wire', () => {
    const r: MetricRecord = { step: 3, values: { a: 1.5, b: Number.NaN, c: Number.POSITIVE_INFINITY, d: Number.NEGATIVE_INFINITY } };
    const back = fromWireRecord(toWireRecord(r));
    expect(back.step).toBe(3);
    expect(back.values.a).toBe(1.5);
    expect(back.values.b).toBeNaN();
    expect(back.values.c).toBe(Number.POSITIVE_INFINITY);
    expect(back.values.d).toBe(Number.NEGATIVE_INFINITY);
  });

  it('refuses a fraction outside (0, 1); a reason that is not a collapse stop names no step', () => {
    expect(() => new CollapseWatch('r', config(), 1)).toThrow(/fraction must be in \(0, 1\)/);
    expect(collapseStopStep('stopped by the user')).toBeNull();
    expect(collapseStopStep(null)).toBeNull();
  });
});
