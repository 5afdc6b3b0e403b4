import { describe, expect, it } from 'vitest';
import { headline, stepsToThreshold, successFall, verdict } from './summary';

const s = { steps: [0, 10, 20, 30, 40], y: [0.1, 0.5, null, 0.8, 0.6] };

describe('headline', () => {
  it('finds the last and best finite values with their steps', () => {
    expect(headline(s)).toEqual({ final: 0.6, finalStep: 40, best: 0.8, bestStep: 30 });
  });
  it('uses the minimum when lower is better', () => {
    expect(headline(s, 'lower').best).toBe(0.1);
  });
  it('is all null without finite data', () => {
    expect(headline({ steps: [1], y: [null] })).toEqual({ final: null, finalStep: null, best: null, bestStep: null });
  });
});

describe('stepsToThreshold', () => {
  it('returns the first step at or above the threshold', () => {
    expect(stepsToThreshold(s, 0.5)).toBe(10);
    expect(stepsToThreshold(s, 0.75)).toBe(30);
  });
  it('returns null when never reached', () => {
    expect(stepsToThreshold(s, 0.9)).toBeNull();
  });
});

describe('verdict', () => {
  const steady = { steps: [0, 1, 2, 3, 4, 5], y: [0.1, 0.2, 0.3, 0.3, 0.4, 0.4] };
  it('calls a run with a critical alert collapsed, naming the step', () => {
    const v = verdict({
      success: steady,
      alerts: [{ severity: 'critical', message: 'grad-norm spike', firstStep: 3 }],
      nonFiniteSteps: [],
    });
    expect(v).toEqual({ level: 'collapsed', reason: 'step 3: grad-norm spike' });
  });
  it('calls non-finite gradients a collapse', () => {
    expect(verdict({ success: steady, alerts: [], nonFiniteSteps: [7, 4] }).reason).toBe('step 4: non-finite gradient norm or loss');
  });
  it('does not call a 6-step fall of training success 5/16 → 1/16 a collapse: it is within sampling noise', () => {
    // The compare view once said "Collapsed" beside an empty Alerts column for such a 6-step run (16 episodes a step).
    const success = { steps: [1, 2, 3, 4, 5, 6], y: [2 / 16, 5 / 16, 4 / 16, 2 / 16, 1 / 16, 1 / 16] };
    const v = verdict({ success, alerts: [], nonFiniteSteps: [], episodesPerPoint: 16 });
    expect(v.level).toBe('stable');
    expect(v.reason).toMatch(/within sampling noise \(z = 2\.3 < 3\)/);
    // Point against point (5/16 vs 1/16) it is z ≈ 1.8; as means of 2 steps (9/32 vs 2/32) z ≈ 2.3.
    const f = successFall(success, 16);
    expect(f?.window).toBe(2);
    expect(f?.best).toBeCloseTo(9 / 32);
    expect(f?.final).toBeCloseTo(2 / 32);
    expect(f?.z).toBeCloseTo(2.32, 1);
  });
  it('never says collapsed without a critical alert or a non-finite value; a fall beyond noise is watch', () => {
    // 40 steps at 0.8 then 20 at 0.05, 16 episodes a step: far beyond binomial noise.
    const steps = Array.from({ length: 60 }, (_, i) => i + 1);
    const y = steps.map((s) => (s <= 40 ? 0.8 : 0.05));
    const v = verdict({ success: { steps, y }, alerts: [], nonFiniteSteps: [], episodesPerPoint: 16 });
    expect(v.level).toBe('watch');
    expect(v.reason).toMatch(/^success fell from 0\.80 \(step \d+\) to 0\.05 \(step 60\) \(means of 10 steps\), beyond sampling noise/);
    expect(v.reason).toContain('no detector alert');
    // The same run with the detector's critical alert: collapsed, citing the alert.
    const c = verdict({
      success: { steps, y },
      alerts: [{ severity: 'critical', message: 'Training success fell to 5 %', firstStep: 45 }],
      nonFiniteSteps: [],
    });
    expect(c).toEqual({ level: 'collapsed', reason: 'step 45: Training success fell to 5 %' });
  });
  it('estimates the noise from the series when the episodes per step are unknown', () => {
    const noisy = { steps: [0, 1, 2, 3, 4, 5], y: [0.1, 0.6, 0.5, 0.3, 0.2, 0.1] };
    expect(verdict({ success: noisy, alerts: [], nonFiniteSteps: [] }).level).toBe('stable');
    const steps = Array.from({ length: 30 }, (_, i) => i);
    const y = steps.map((s) => (s < 20 ? 0.6 + 0.02 * (s % 2) : 0.1 + 0.02 * (s % 2)));
    expect(verdict({ success: { steps, y }, alerts: [], nonFiniteSteps: [] }).level).toBe('watch');
  });
  it('says watch on warnings only, too-early on few points, stable otherwise', () => {
    expect(
      verdict({ success: steady, alerts: [{ severity: 'warning', message: 'entropy drop', firstStep: 2 }], nonFiniteSteps: [] }).level,
    ).toBe('watch');
    expect(verdict({ success: { steps: [0], y: [0.1] }, alerts: [], nonFiniteSteps: [] }).level).toBe('too-early');
    expect(verdict({ success: steady, alerts: [], nonFiniteSteps: [] }).level).toBe('stable');
  });
  it('does not call a run the detector never read stable: no alerts is no evidence then', () => {
    const never = verdict({ success: steady, alerts: [], nonFiniteSteps: [], detector: { through: null, lastStep: 5 } });
    expect(never).toEqual({ level: 'unchecked', reason: 'no alerts, but the collapse detector has not checked this run: run it to judge' });
    const part = verdict({ success: steady, alerts: [], nonFiniteSteps: [], detector: { through: 3, lastStep: 5 } });
    expect(part).toEqual({
      level: 'unchecked',
      reason: 'the collapse detector has checked steps up to 3 of 5: run it again to judge the rest',
    });
    expect(verdict({ success: steady, alerts: [], nonFiniteSteps: [], detector: { through: 5, lastStep: 5 } }).level).toBe('stable');
    // What the run's own data shows still counts without the detector: non-finite values, a fall beyond noise.
    expect(verdict({ success: steady, alerts: [], nonFiniteSteps: [4], detector: { through: null, lastStep: 5 } }).level).toBe('collapsed');
    const steps = Array.from({ length: 60 }, (_, i) => i + 1);
    const fell = verdict({
      success: { steps, y: steps.map((s) => (s <= 40 ? 0.8 : 0.05)) },
      alerts: [],
      nonFiniteSteps: [],
      episodesPerPoint: 16,
      detector: { through: null, lastStep: 60 },
    });
    expect(fell.level).toBe('watch');
    expect(fell.reason).toMatch(/the detector has not checked this run — run it to check$/);
  });
});
