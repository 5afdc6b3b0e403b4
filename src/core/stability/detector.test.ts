import { describe, expect, it } from 'vitest';
import { CollapseDetector, detectAlerts } from './detector';
import { resolveDetectorConfig } from './config';
import { SOURCE_NAMED_KEYS } from './rules/engineGap';
import { RULES } from './rules/index';
import { syntheticStream, type SyntheticShape } from './synthetic';
import { isMetricKey } from '../../shared/metrics';

function rulesFired(shape: SyntheticShape, seed = 1, extra: { nanAt?: number } = {}): Set<string> {
  const recs = syntheticStream({ steps: 150, seed, shape, collapseAt: 90, ...extra });
  return new Set(detectAlerts('r', recs).map((a) => a.rule));
}

describe('collapse detector', () => {
  it('is quiet on calm streams (10 seeds, 300 steps)', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const alerts = detectAlerts('r', syntheticStream({ steps: 300, seed, shape: 'calm' }));
      expect(alerts.map((a) => `${a.rule}@${a.firstStep}: ${a.message}`)).toEqual([]);
    }
  });

  it('is quiet on calm runs measured with small, noisy batches (8 episodes per step, 20 seeds)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const alerts = detectAlerts('r', syntheticStream({ steps: 200, seed, shape: 'calm', episodes: 8 }));
      expect(alerts.map((a) => `${a.rule}@${a.firstStep}: ${a.message}`)).toEqual([]);
    }
  });

  it('still catches the collapse in a noisy small-batch run', () => {
    const alerts = detectAlerts('r', syntheticStream({ steps: 200, seed: 3, shape: 'cispo_collapse', collapseAt: 120, episodes: 8 }));
    expect(alerts.some((a) => a.rule === 'success_collapse' && a.metric === 'episode/success_rate')).toBe(true);
    expect(Math.min(...alerts.map((a) => a.firstStep))).toBeGreaterThanOrEqual(120);
  });

  it('catches the tolerant-clipping collapse: grad spike, format drop, success collapse, clip fraction', () => {
    const recs = syntheticStream({ steps: 150, seed: 2, shape: 'cispo_collapse', collapseAt: 90 });
    const alerts = detectAlerts('r', recs);
    const byRule = new Map(alerts.map((a) => [`${a.rule}|${a.metric}`, a]));
    const spike = byRule.get('grad_norm_spike|actor/grad_norm');
    expect(spike).toBeDefined();
    expect(spike!.firstStep).toBeGreaterThanOrEqual(90);
    expect(spike!.firstStep).toBeLessThanOrEqual(93);
    expect(spike!.severity).toBe('critical');
    expect(spike!.hint).toMatch(/SAMPO or GSPO/);
    expect(spike!.evidence.steps.length).toBeGreaterThan(5);
    expect(spike!.evidence.steps[0]).toBeLessThan(spike!.firstStep);
    expect(byRule.get('validity_drop|episode/valid_format_ratio')?.severity).toBe('critical');
    expect(byRule.get('success_collapse|episode/success_rate')).toBeDefined();
    expect(byRule.get('clip_fraction_drift|actor/pg_clipfrac')).toBeDefined();
    expect(byRule.get('kl_drift|actor/ppo_kl')).toBeDefined();
    // Nothing fires before the collapse.
    expect(Math.min(...alerts.map((a) => a.firstStep))).toBeGreaterThanOrEqual(90);
  });

  it.each([
    ['entropy_collapse', 'entropy_shift'],
    ['dead_signal', 'dead_signal'],
    ['length_runaway', 'length_runaway'],
    ['mismatch', 'train_inference_mismatch'],
    ['kl_drift', 'kl_drift'],
  ] as const)('shape %s fires %s (and only after onset)', (shape, rule) => {
    const recs = syntheticStream({ steps: 150, seed: 3, shape, collapseAt: 90 });
    const alerts = detectAlerts('r', recs);
    expect(alerts.some((a) => a.rule === rule)).toBe(true);
    expect(Math.min(...alerts.map((a) => a.firstStep))).toBeGreaterThanOrEqual(90);
  });

  it('non-finite: NaN grad norm and infinite loss are critical; validation NaNs are not events', () => {
    const alerts = detectAlerts('r', syntheticStream({ steps: 60, seed: 4, nanAt: 40 }));
    const nf = alerts.filter((a) => a.rule === 'non_finite');
    // The two gradient norms turn NaN together: one alert for that cause, naming both; the infinite loss is another.
    expect(nf.map((a) => a.metric).sort()).toEqual(['actor/grad_norm', 'actor/pg_loss', 'actor/skipped_updates'].sort());
    expect(nf.find((a) => a.metric === 'actor/grad_norm')!.message).toBe(
      '2 metrics under actor/ became NaN at step 40: actor/grad_norm, actor/grad_norm_max.',
    );
    expect(nf.find((a) => a.metric === 'actor/pg_loss')!.message).toMatch(
      /^Policy-gradient loss became Infinity at step 40; it was -?[\d.]+ at step 39\.$/,
    );
    expect(nf.find((a) => a.metric === 'actor/grad_norm')!.severity).toBe('critical');
    expect(nf.find((a) => a.metric === 'actor/grad_norm')!.evidence.values.at(-1)).toBeNull();
    expect(alerts.every((a) => a.firstStep === 40)).toBe(true);
  });

  it('entropy blow-up fires', () => {
    const recs = syntheticStream({ steps: 40, seed: 5 }).map((r) => ({
      step: r.step,
      values: { ...r.values, 'actor/entropy': r.step > 20 ? 5 : r.values['actor/entropy'] },
    }));
    expect(detectAlerts('r', recs).some((a) => a.rule === 'entropy_shift' && /blew up/.test(a.message))).toBe(true);
  });

  it('incremental feed equals batch, merges a sustained episode into one alert', () => {
    const recs = syntheticStream({ steps: 150, seed: 6, shape: 'cispo_collapse', collapseAt: 90 });
    const d = new CollapseDetector('r');
    const updates = recs.flatMap((r) => d.feed(r));
    expect(d.alerts()).toEqual(detectAlerts('r', recs));
    const spikes = d.alerts().filter((a) => a.rule === 'grad_norm_spike');
    expect(spikes).toHaveLength(1);
    expect(spikes[0].lastStep).toBe(150);
    expect(updates.filter((u) => u.kind === 'raised')).toHaveLength(d.alerts().length);
  });

  it('thresholds are configurable, and unknown fields are named', () => {
    const recs = syntheticStream({ steps: 150, seed: 2, shape: 'cispo_collapse', collapseAt: 90 });
    const off = detectAlerts('r', recs, { gradNormSpike: { enabled: false } });
    expect(off.some((a) => a.rule === 'grad_norm_spike')).toBe(false);
    expect(() => resolveDetectorConfig({ gradNormSpike: { factr: 3 } as never })).toThrow(/gradNormSpike\.factr.*known: enabled, window/);
  });

  it('every rule reads catalog keys only', () => {
    // engine_gap also reads verl's rollout_corr/* and training/rollout_probs_diff_* under their own names.
    for (const r of RULES)
      for (const k of r.metrics) if (k !== '*') expect(isMetricKey(k) || SOURCE_NAMED_KEYS.has(k), `${r.id}: ${k}`).toBe(true);
    expect(new Set(RULES.map((r) => r.id)).size).toBe(RULES.length);
  });

  it('fires on every failure shape across seeds (no false negatives) and stays quiet before onset', () => {
    for (const shape of ['cispo_collapse', 'entropy_collapse', 'dead_signal', 'length_runaway', 'mismatch', 'kl_drift'] as const) {
      for (let seed = 10; seed < 15; seed++) expect(rulesFired(shape, seed).size, `${shape} seed ${seed}`).toBeGreaterThan(0);
    }
  });
});

describe('success collapse over sparse validations', () => {
  const vals = (points: Array<[number, number, number | undefined]>) =>
    points.map(([step, p, n]) => ({ step, values: { 'val/success_rate': p, ...(n === undefined ? {} : { 'val/episodes': n }) } }));

  it('two validations are enough when the fall is far beyond binomial noise', () => {
    // Harsh SAMPO's shape: ≈ the warm start's sampled success after step 1, nothing left at step 10.
    const alerts = detectAlerts(
      'r',
      vals([
        [1, 0.3, 64],
        [10, 0, 64],
      ]),
    ).filter((a) => a.rule === 'success_collapse');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ metric: 'val/success_rate', severity: 'critical', firstStep: 10 });
    expect(alerts[0].message).toMatch(/0 % \(0\/64\) at step 10 from its best 30 % \(19\/64\) at step 1/);
  });

  it('a fall within sampling noise, or below the peak that counts as learned, is quiet', () => {
    expect(
      detectAlerts(
        'r',
        vals([
          [1, 0.35, 64],
          [10, 0.17, 64],
        ]),
      ),
    ).toEqual([]);
    expect(
      detectAlerts(
        'r',
        vals([
          [1, 0.15, 64],
          [10, 0, 64],
        ]),
      ),
    ).toEqual([]);
    // The same fall measured on 400 episodes is evidence (z ≈ 5.8): a warning, as 0.17 is above (1 − 0.8) × 0.35.
    expect(
      detectAlerts(
        'r',
        vals([
          [1, 0.35, 400],
          [10, 0.17, 400],
        ]),
      ).map((a) => a.severity),
    ).toEqual(['warning']);
  });

  it('streams without val/episodes keep the smoothed comparison (two points are not enough)', () => {
    expect(
      detectAlerts(
        'r',
        vals([
          [1, 0.3, undefined],
          [10, 0, undefined],
        ]),
      ),
    ).toEqual([]);
  });
});

describe('alert merging', () => {
  it('a sparse validation metric collapsing over many validations is one alert', () => {
    const recs = syntheticStream({ steps: 300, seed: 4, shape: 'cispo_collapse', collapseAt: 180 });
    const val = detectAlerts('r', recs).filter((a) => a.metric === 'val/success_rate');
    expect(val).toHaveLength(1);
    expect(val[0].lastStep).toBe(300);
  });

  it('an alert that goes quiet for longer than the gap starts a new one', () => {
    const base = syntheticStream({ steps: 60, seed: 7 });
    const recs = base.map((r) => ({
      step: r.step,
      values: { ...r.values, 'filter/zero_variance_share': (r.step >= 10 && r.step < 20) || r.step >= 40 ? 1 : 0.3 },
    }));
    const dead = detectAlerts('r', recs).filter((a) => a.rule === 'dead_signal');
    // Each alert's window opens where its streak began (steps 10 and 40), though it is raised 5 steps later.
    expect(dead.map((a) => [a.firstStep, a.lastStep])).toEqual([
      [10, 19],
      [40, 60],
    ]);
    expect(dead.map((a) => a.id)).toEqual(['dead_signal:filter/zero_variance_share:14', 'dead_signal:filter/zero_variance_share:44']);
  });
});

describe('alert evidence window (read straight from the history ring)', () => {
  const stream = (from: number, to: number, n: number) =>
    Array.from({ length: n }, (_, s) => ({ step: s * 2, values: { 'custom/x': s >= from && s < to ? Infinity : s, 'other/y': 1 } }));

  it('a short episode shows evidenceBefore points ahead of its first step, then every point to its last', () => {
    const [a] = detectAlerts('r', stream(50, 55, 80));
    expect([a.rule, a.metric, a.firstStep, a.lastStep]).toEqual(['non_finite', 'custom/x', 100, 108]);
    expect(a.evidence.steps).toEqual(Array.from({ length: 15 }, (_, i) => 80 + 2 * i));
    expect(a.evidence.values).toEqual([40, 41, 42, 43, 44, 45, 46, 47, 48, 49, null, null, null, null, null]);
  });

  it('an episode longer than the history keeps the oldest points still held (onset) and the latest ten', () => {
    // Infinity from point 100 to the end (600 points, history 400): at the last step the ring holds points 200…599.
    const [a] = detectAlerts('r', stream(100, 600, 600));
    expect([a.firstStep, a.lastStep]).toEqual([200, 1198]);
    const onset = Array.from({ length: 30 }, (_, i) => 400 + 2 * i);
    const latest = Array.from({ length: 10 }, (_, i) => 1180 + 2 * i);
    // The message quotes the last finite value (99 at step 198), so the evidence holds it too, ahead of the ring's.
    expect(a.message).toContain('it was 99 at step 198');
    expect(a.evidence.steps).toEqual([198, ...onset, ...latest]);
    expect(a.evidence.values.slice(1).every((v) => v === null)).toBe(true);
    expect(a.evidence.values[0]).toBe(99);
  });
});

describe("alert text built when read (a finding's message as a function of values fixed when it fired)", () => {
  const shapes: SyntheticShape[] = ['cispo_collapse', 'entropy_collapse', 'dead_signal', 'length_runaway', 'mismatch', 'kl_drift'];

  it('reading every update at once and reading only the last ones after the stream give the same text', () => {
    for (const shape of shapes)
      for (const seed of [1, 2]) {
        const recs = syntheticStream({ steps: 200, seed, shape, collapseAt: 100, nanAt: seed === 2 ? 150 : undefined, episodes: 16 });
        const eager = new CollapseDetector('r');
        const seenAtOnce: string[] = [];
        for (const r of recs)
          for (const u of eager.feed(r)) seenAtOnce.push(`${u.kind} ${u.alert.id}@${u.alert.lastStep}: ${u.alert.message}`);
        const lazy = new CollapseDetector('r');
        const updates = recs.flatMap((r) => lazy.feed(r));
        // The windows, streaks and bests have moved on since each update: its text still quotes its own step.
        const readLate = updates.map((u) => `${u.kind} ${u.alert.id}@${u.alert.lastStep}: ${u.alert.message}`);
        expect(readLate, `${shape} seed ${seed}`).toEqual(seenAtOnce);
        expect(seenAtOnce.length, `${shape} seed ${seed}`).toBeGreaterThan(0);
        expect(JSON.stringify(lazy.alerts())).toBe(JSON.stringify(eager.alerts()));
      }
  });

  it('an update names its alert without building the text, and the alert is plain data with the message in place', () => {
    const recs = syntheticStream({ steps: 150, seed: 6, shape: 'cispo_collapse', collapseAt: 90 });
    const d = new CollapseDetector('r');
    const updates = recs.flatMap((r) => d.feed(r));
    const last = updates[updates.length - 1];
    expect(last.id).toBe(last.alert.id);
    const alert = last.alert;
    expect(Object.keys(alert).slice(0, 9)).toEqual([
      'id',
      'runId',
      'rule',
      'severity',
      'metric',
      'firstStep',
      'lastStep',
      'message',
      'hint',
    ]);
    expect(Object.getOwnPropertyDescriptor(alert, 'message')).toMatchObject({ writable: true, enumerable: true });
    expect(alert.message.length).toBeGreaterThan(20);
    expect(structuredClone(alert)).toEqual(alert);
  });
});
