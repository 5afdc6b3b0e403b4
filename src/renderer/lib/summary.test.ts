import { describe, expect, it } from 'vitest';
import { headline, stepsToThreshold, verdict } from './summary';

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
    const v = verdict({ success: steady, alerts: [{ severity: 'critical', message: 'grad-norm spike', firstStep: 3 }], nonFiniteSteps: [] });
    expect(v).toEqual({ level: 'collapsed', reason: 'step 3: grad-norm spike' });
  });
  it('calls non-finite gradients a collapse', () => {
    expect(verdict({ success: steady, alerts: [], nonFiniteSteps: [7, 4] }).reason).toBe('step 4: non-finite gradient norm or loss');
  });
  it('calls a success drop below half the peak a collapse', () => {
    const v = verdict({ success: { steps: [0, 1, 2, 3, 4, 5], y: [0.1, 0.6, 0.5, 0.3, 0.2, 0.1] }, alerts: [], nonFiniteSteps: [] });
    expect(v.level).toBe('collapsed');
    expect(v.reason).toContain('0.60 (step 1)');
  });
  it('says watch on warnings only, too-early on few points, stable otherwise', () => {
    expect(verdict({ success: steady, alerts: [{ severity: 'warning', message: 'entropy drop', firstStep: 2 }], nonFiniteSteps: [] }).level).toBe('watch');
    expect(verdict({ success: { steps: [0], y: [0.1] }, alerts: [], nonFiniteSteps: [] }).level).toBe('too-early');
    expect(verdict({ success: steady, alerts: [], nonFiniteSteps: [] }).level).toBe('stable');
  });
});
