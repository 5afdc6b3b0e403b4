/**
 * An alert's evidence window holds what its message cites: the spike, or the best level a drop is
 * measured from, and the threshold the finding crossed — the Alerts view charts exactly this window.
 */
import { describe, expect, it } from 'vitest';
import { detectAlerts } from './detector';
import { DEFAULT_DETECTOR_CONFIG } from './config';
import { syntheticStream } from './synthetic';
import type { Alert } from '../../shared/api';
import type { MetricRecord } from '../../shared/metrics';

const cfg = DEFAULT_DETECTOR_CONFIG;

function find(alerts: Alert[], rule: string, metric: string): Alert {
  const a = alerts.find((x) => x.rule === rule && x.metric === metric);
  if (!a) throw new Error(`no ${rule} alert on ${metric}: ${alerts.map((x) => `${x.rule}/${x.metric}`).join(', ')}`);
  return a;
}

function increasing(steps: readonly number[]): boolean {
  return steps.every((s, i) => i === 0 || s > steps[i - 1]);
}

describe('alert evidence', () => {
  it("keeps a drop's best level (long before the onset), the onset and the latest steps in one window", () => {
    const alerts = detectAlerts('r', syntheticStream({ steps: 200, seed: 1, shape: 'cispo_collapse' }));
    const a = find(alerts, 'validity_drop', 'episode/valid_format_ratio');
    expect(a.peak).toBeDefined();
    const { steps } = a.evidence;
    // The best was reached well before the alert fired: without the peak the window began 10 points before it.
    expect(a.peak!.step).toBeLessThan(a.firstStep - cfg.evidenceBefore);
    expect(steps).toContain(a.peak!.step);
    expect(steps).toContain(a.firstStep);
    expect(steps.at(-1)).toBe(a.lastStep);
    expect(increasing(steps)).toBe(true);
    // Beyond the window's points: the logged points the message quotes (at most three) are kept in it too.
    expect(steps.length).toBeLessThanOrEqual(cfg.evidenceMax + 3);
    // The cited point is a logged one, the highest of the best window, and the message names it at its step; the
    // threshold is the best window's mean (labelled as a mean) less the warning drop.
    expect(a.evidence.values[steps.indexOf(a.peak!.step)]).toBe(a.peak!.value);
    expect(a.message).toContain(`(highest ${Math.round(a.peak!.value * 100)} % at step ${a.peak!.step})`);
    const bestMean = Number(/from its best mean (\d+) %/.exec(a.message)![1]) / 100;
    expect(Math.abs(a.threshold! + cfg.validityDrop.warnDrop - bestMean)).toBeLessThanOrEqual(0.005);
  });

  it('charts validations only (NaN between them is not evidence) and holds the best validation cited', () => {
    const alerts = detectAlerts('r', syntheticStream({ steps: 1000, seed: 1, shape: 'cispo_collapse' }));
    const a = find(alerts, 'success_collapse', 'val/success_rate');
    const cited = /best \d+ % \(\d+\/\d+\) at step (\d+)/.exec(a.message);
    expect(cited).not.toBeNull();
    expect(a.peak?.step).toBe(Number(cited![1]));
    expect(a.evidence.steps).toContain(a.peak!.step);
    expect(a.evidence.values.every((v) => v !== null)).toBe(true);
    // Every tenth step is a validation: the window spans ~40 of them, not ~4 among 36 gaps.
    expect(a.evidence.steps.length).toBeGreaterThan(20);
    expect(a.threshold).toBeCloseTo((1 - cfg.successCollapse.warnFrac) * a.peak!.value, 12);
  });

  it("puts a spike's value and its threshold (factor × rolling median) on the alert", () => {
    const recs: MetricRecord[] = [];
    for (let step = 1; step <= 40; step++) recs.push({ step, values: { 'actor/grad_norm': step === 30 ? 50 : 1 + (step % 3) * 0.01 } });
    const a = find(detectAlerts('r', recs), 'grad_norm_spike', 'actor/grad_norm');
    expect(a.peak).toEqual({ step: 30, value: 50 });
    expect(a.threshold).toBeGreaterThan(cfg.gradNormSpike.factor * 1);
    expect(a.threshold).toBeLessThan(cfg.gradNormSpike.factor * 1.02 + 1e-9);
    const i = a.evidence.steps.indexOf(30);
    expect(a.evidence.values[i]).toBe(50);
  });

  it('puts the cited value first when the ring no longer holds it', () => {
    // A best format ratio at step 5, then a long slow slide: by the alert, the ring (400 points) has dropped it.
    const recs: MetricRecord[] = [];
    for (let step = 1; step <= 900; step++) {
      const v = step <= 10 ? 0.99 : step < 600 ? 0.95 : 0.2;
      recs.push({ step, values: { 'episode/valid_format_ratio': v } });
    }
    const a = find(detectAlerts('r', recs), 'validity_drop', 'episode/valid_format_ratio');
    expect(a.peak!.step).toBeLessThanOrEqual(10);
    expect(a.evidence.steps[0]).toBe(a.peak!.step);
    expect(a.evidence.values[0]).toBeCloseTo(a.peak!.value, 12);
    expect(a.evidence.steps).toContain(a.firstStep);
    expect(increasing(a.evidence.steps)).toBe(true);
  });
});
