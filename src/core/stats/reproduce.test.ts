/**
 * reproduce's comparison: a rerun on another backend whose every metric differs by at most 5e-6
 * was called DIVERGED (exit 3), because the band was scaled to each metric's range and a near-constant metric got
 * a band narrower than float rounding. Across backends the verdict is "same within float tolerance", the tolerance
 * stated; bit-identical stays the same-backend verdict.
 */
import { describe, expect, it } from 'vitest';
import type { MetricRecord } from '../../shared/metrics';
import { FLOAT_TOLERANCE, compareStreams, verdictLabel, withinTolerance } from './reproduce';

/** 30 steps of metrics at several scales, two of them near-constant (a KL coefficient; a clip fraction at 0). */
function stream(): MetricRecord[] {
  return Array.from({ length: 30 }, (_, i) => ({
    step: i + 1,
    values: {
      'actor/pg_loss': 0.3 * Math.sin(i / 3),
      'actor/grad_norm': 12 + Math.cos(i),
      'actor/kl_coef': 0.001,
      'actor/pg_clipfrac': 0,
      'actor/ppo_kl': 1e-4 + 1e-7 * i,
      'episode/success_rate': Math.min(1, i / 30),
      'val/success_rate': i % 10 === 9 ? 0.5 : NaN,
      'perf/step_s': 1 + i,
    },
  }));
}

/** The same stream with every finite deterministic value moved by up to `d` (alternating sign). */
function shifted(s: MetricRecord[], d: number): MetricRecord[] {
  return s.map((r, i) => ({
    step: r.step,
    values: Object.fromEntries(
      Object.entries(r.values).map(([k, v], j) => [
        k,
        Number.isFinite(v) && !k.startsWith('perf/') ? v + ((i + j) % 2 ? d : -d) : k.startsWith('perf/') ? v * 2 : v,
      ]),
    ),
  }));
}

describe('compareStreams: float tolerance across backends', () => {
  it('every metric within 5e-6 (the near-constant ones too) → within-tolerance, with the tolerance stated', () => {
    const r = compareStreams(stream(), shifted(stream(), 5e-6));
    expect(r.verdict).toBe('within-tolerance');
    expect(r.tolerance).toEqual(FLOAT_TOLERANCE);
    expect(r.maxAbsDiff).toBeCloseTo(5e-6, 12);
    expect(r.keys.every((k) => k.withinTolerance && !k.identical)).toBe(true);
    expect(verdictLabel(r)).toBe('SAME WITHIN FLOAT TOLERANCE (|Δ| ≤ 0.00001 + 0.0001·|x| at every step; max |Δ| 0.000005)');
  });

  it('the band is never narrower than the tolerance: a constant 0 metric moved by 5e-6 stays in band', () => {
    // Beyond tolerance elsewhere (1e-3 relative on pg_loss), so not within-tolerance, but every key in band.
    const s = stream();
    const r2 = shifted(s, 5e-6).map((r) => ({
      step: r.step,
      values: { ...r.values, 'actor/pg_loss': r.values['actor/pg_loss'] * 1.001 + 1e-4 },
    }));
    const r = compareStreams(s, r2);
    expect(r.verdict).toBe('within-band');
    expect(r.keys.find((k) => k.key === 'actor/pg_clipfrac')!.inBand).toBe(1);
    expect(r.keys.find((k) => k.key === 'actor/pg_loss')!.withinTolerance).toBe(false);
  });

  it('bit-identical stays bit-identical; perf/* timings are not compared', () => {
    const s = stream();
    const timings = s.map((r) => ({ step: r.step, values: { ...r.values, 'perf/step_s': 99 } }));
    expect(compareStreams(s, timings).verdict).toBe('bit-identical');
    expect(verdictLabel(compareStreams(s, s))).toBe('BIT-IDENTICAL');
  });

  it('a real difference is not tolerated: a different run diverges, a NaN where the original was finite is beyond tolerance', () => {
    const s = stream();
    const other = s.map((r) => ({ step: r.step, values: { ...r.values, 'episode/success_rate': 1 - r.values['episode/success_rate'] } }));
    expect(compareStreams(s, other).verdict).toBe('diverged');
    const nan = shifted(s, 1e-7).map((r) => (r.step === 5 ? { step: 5, values: { ...r.values, 'actor/grad_norm': NaN } } : r));
    const r = compareStreams(s, nan);
    expect(r.keys.find((k) => k.key === 'actor/grad_norm')!.withinTolerance).toBe(false);
    expect(r.verdict).not.toBe('within-tolerance');
  });

  it('a rerun missing steps is never "within tolerance" of the whole run', () => {
    const s = stream();
    expect(compareStreams(s, shifted(s, 1e-7).slice(0, 20)).verdict).not.toBe('within-tolerance');
  });

  it('names the first and last step compared: a trainer logs step 0 (validation before any update), so 2 RL steps are 3 steps', () => {
    const s = [{ step: 0, values: { 'val/success_rate': 0.1 } }, ...stream().slice(0, 2)];
    expect(compareStreams(s, s)).toMatchObject({ stepsCompared: 3, firstStep: 0, lastStep: 2 });
    expect(compareStreams(s, s.slice(0, 2))).toMatchObject({ stepsCompared: 2, firstStep: 0, lastStep: 1 });
    expect(compareStreams(s, [])).toMatchObject({ stepsCompared: 0, firstStep: null, lastStep: null });
  });

  it('withinTolerance is atol + rtol·|original|', () => {
    expect(withinTolerance(0, 1e-5)).toBe(true);
    expect(withinTolerance(0, 1.1e-5)).toBe(false);
    expect(withinTolerance(100, 100.01)).toBe(true);
    expect(withinTolerance(100, 100.0102)).toBe(false);
  });
});
