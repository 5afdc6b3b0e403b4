/**
 * The detector on streams shaped like external runs, without ../shared/data/real-runs:
 * only the keys a source logs (no NaN placeholders), steps from 101 or every 10 steps, verl-sized lengths and
 * 7B-sized entropies. tests/detector.realruns.test.ts checks the same logic on the real files.
 */
import { describe, expect, it } from 'vitest';
import { detectAlerts } from './detector';
import { Cadence } from './stats';
import { RULES } from './rules/index';
import { ruleCoverage } from './coverage';
import { Rng } from '../util/rng';
import type { MetricRecord } from '../../shared/metrics';

/** Records at steps first, first + every, … (n of them), values from `f(i)` (i = 0…n−1). */
function stream(n: number, f: (i: number) => Record<string, number>, first = 1, every = 1): MetricRecord[] {
  return Array.from({ length: n }, (_, i) => ({ step: first + i * every, values: f(i) }));
}
const rules = (recs: MetricRecord[]) => detectAlerts('r', recs).map((a) => `${a.rule}:${a.metric}:${a.severity}`);
/** The step an alert was raised at (its id ends with it; its firstStep is where the event began). */
const raisedAt = (a: { id: string }) => Number(a.id.slice(a.id.lastIndexOf(':') + 1));

describe('Cadence: windows in steps become logged points', () => {
  it('learns the interval from the step numbers (gaps and a late start do not move it)', () => {
    const c = new Cadence();
    expect(c.points(3)).toBe(3);
    for (const s of [101, 102, 103, 104, 110, 111]) c.push(s);
    expect(c.stride).toBe(1);
    const t = new Cadence();
    for (const s of [10, 20, 30, 40, 60, 70]) t.push(s);
    expect(t.stride).toBe(10);
    expect(t.points(3)).toBe(1);
    expect(t.points(50)).toBe(5);
  });
});

describe('sparse external streams', () => {
  it('no rule throws or fires on calm streams carrying random subsets of keys, from step 101, with gaps', () => {
    const rng = new Rng(7);
    const all = [
      'actor/entropy',
      'actor/grad_norm',
      'actor/pg_loss',
      'actor/ppo_kl',
      'actor/kl_loss',
      'actor/pg_clipfrac',
      'episode/score_mean',
      'episode/reward_mean',
      'response_length/mean',
      'response_length/clip_ratio',
      'filter/zero_variance_share',
      'val/score_mean',
      'critic/vf_loss',
    ];
    for (let trial = 0; trial < 20; trial++) {
      const keys = all.filter(() => rng.float() < 0.5);
      // Steps 101, 102, …, with a gap of 6 after every 10th point; validation on every 10th point only.
      const recs = stream(200, (i) => {
        const v: Record<string, number> = {};
        const calm: Record<string, number> = {
          'actor/entropy': 0.4,
          'actor/grad_norm': 2,
          'actor/pg_loss': 0.01,
          'actor/ppo_kl': 0.001,
          'actor/kl_loss': 0.01,
          'actor/pg_clipfrac': 0.005,
          'episode/score_mean': 0.6,
          'episode/reward_mean': 0.6,
          'response_length/mean': 300,
          'response_length/clip_ratio': 0.02,
          'filter/zero_variance_share': 0.3,
          'val/score_mean': 0.55,
          'critic/vf_loss': 0.1,
        };
        for (const k of keys) if (!k.startsWith('val/') || i % 10 === 0) v[k] = calm[k] * (1 + 0.05 * rng.normal());
        return v;
      }).map((r, i) => ({ ...r, step: 101 + i + Math.floor(i / 10) * 6 }));
      expect(recs.at(-1)!.step).toBe(101 + 199 + 19 * 6);
      expect(rules(recs), keys.join(',')).toEqual([]);
    }
  });

  it('a rule whose metrics a run lacks is not applicable and stays silent', () => {
    const recs = stream(60, (i) => ({ 'actor/entropy': i < 30 ? 0.5 : 0.001 }));
    const cov = new Map(ruleCoverage(['actor/entropy']).map((c) => [c.rule, c.applicable]));
    const fired = new Set(detectAlerts('r', recs).map((a) => a.rule));
    for (const r of RULES) if (!cov.get(r.id)) expect(fired.has(r.id), r.id).toBe(false);
  });
});

describe('entropy_shift: a fall is learning unless it crashes or comes with a sign', () => {
  // verl 1a's shape: entropy 0.52 → 0.06 over 430 steps while the score climbs.
  const learning = (i: number) => ({
    'actor/entropy': 0.52 * Math.exp(-i / 200),
    'actor/grad_norm': 2 + 0.1 * Math.sin(i),
    'episode/score_mean': Math.min(0.75, 0.01 + i / 500),
  });

  it('an order-of-magnitude fall over hundreds of steps with the score rising is quiet', () => {
    expect(rules(stream(430, learning))).toEqual([]);
  });

  it('the same slow fall with the gradient dying is a critical collapse', () => {
    const recs = stream(430, (i) => ({ ...learning(i), 'actor/grad_norm': i < 300 ? 2 : 0.01 }));
    const a = detectAlerts('r', recs).find((x) => x.rule === 'entropy_shift');
    expect(a).toMatchObject({ severity: 'critical' });
    expect(a!.firstStep).toBeGreaterThan(300);
    expect(a!.message).toMatch(/actor\/grad_norm mean/);
  });

  it('the same slow fall with the score falling from its best is a critical collapse', () => {
    const recs = stream(430, (i) => ({ ...learning(i), 'episode/score_mean': i < 300 ? learning(i)['episode/score_mean'] : 0.2 }));
    expect(detectAlerts('r', recs).find((x) => x.rule === 'entropy_shift')).toMatchObject({ severity: 'critical' });
  });

  it('a crash within a few steps with no other metric is a warning (no sign to say more)', () => {
    const recs = stream(60, (i) => ({ 'actor/entropy': i < 30 ? 0.5 : 0.06 }));
    expect(rules(recs)).toEqual(['entropy_shift:actor/entropy:warning']);
  });

  it('TRL logging every 10 steps: three points (1.03 → 0.11 → 0.0085) with the gradient at 0 are critical at the second', () => {
    const pts = [
      { 'actor/entropy': 1.028, 'actor/grad_norm': 0.302, 'episode/reward_mean': 1.875 },
      { 'actor/entropy': 0.113, 'actor/grad_norm': 0, 'episode/reward_mean': 0.494 },
      { 'actor/entropy': 0.0085, 'actor/grad_norm': 0, 'episode/reward_mean': 0.925 },
    ];
    const a = detectAlerts(
      'r',
      stream(3, (i) => pts[i], 10, 10),
    );
    expect(a.map((x) => [x.rule, x.severity, x.firstStep])).toEqual([['entropy_shift', 'critical', 20]]);
    // The same three values logged every step are too few for a 5-step baseline: nothing is judged.
    expect(
      detectAlerts(
        'r',
        stream(3, (i) => pts[i]),
      ),
    ).toEqual([]);
  });

  it('drifting up 0.25 → 0.65 is a warning; a 7B model wobbling 0.02 → 0.06 (3×, +0.04 nats) is quiet; 0.3 → 1.3 is critical', () => {
    expect(rules(stream(70, (i) => ({ 'actor/entropy': 0.25 + (i > 30 ? (i - 30) * 0.01 : 0) })))).toEqual([
      'entropy_shift:actor/entropy:warning',
    ]);
    expect(rules(stream(70, (i) => ({ 'actor/entropy': i < 30 ? 0.02 : 0.06 })))).toEqual([]);
    expect(rules(stream(100, (i) => ({ 'actor/entropy': i < 50 ? 0.3 : 1.3 })))).toEqual(['entropy_shift:actor/entropy:critical']);
  });
});

describe('grad_norm_spike: scale from the run, one spike is a warning', () => {
  const base = (i: number, at: number[], v: number) => ({ 'actor/grad_norm': at.includes(i) ? v : 2.1 + 0.2 * Math.sin(i) });

  it('one 31× spike (verl 1a, step 16) is a warning; two tall points in a row are critical; three smaller in a row are critical', () => {
    expect(rules(stream(60, (i) => base(i, [16], 66)))).toEqual(['grad_norm_spike:actor/grad_norm:warning']);
    expect(rules(stream(60, (i) => base(i, [16, 17], 66)))).toEqual(['grad_norm_spike:actor/grad_norm:critical']);
    expect(rules(stream(60, (i) => base(i, [16, 17, 18], 15)))).toEqual(['grad_norm_spike:actor/grad_norm:critical']);
  });

  it("the median is the run's own: a 0.3-scale TRL run spiking to 3 is caught, a 2.0-scale run at 3 is not", () => {
    expect(rules(stream(30, (i) => ({ 'actor/grad_norm': i === 20 ? 3 : 0.3 }), 10, 10))).toEqual([
      'grad_norm_spike:actor/grad_norm:warning',
    ]);
    expect(rules(stream(30, (i) => ({ 'actor/grad_norm': i === 20 ? 3 : 2 }), 10, 10))).toEqual([]);
  });
});

describe("length_runaway: relative to the run's own lengths", () => {
  it('starting at the cap and shortening (verl GRPO: 86 % → 13 %) is quiet; rising from 1 % to 80 % is critical', () => {
    expect(
      rules(
        stream(200, (i) => ({
          'response_length/clip_ratio': Math.max(0.13, 0.86 - i * 0.02),
          'response_length/mean': 186 - Math.min(50, i),
        })),
      ),
    ).toEqual([]);
    expect(rules(stream(60, (i) => ({ 'response_length/clip_ratio': i < 30 ? 0.01 : 0.8 })))).toEqual([
      'length_runaway:response_length/clip_ratio:critical',
    ]);
  });

  it('a jump against the recent median warns at any scale (32-token lab, 1024-token verl); slow growth over thousands of steps does not', () => {
    for (const scale of [16, 155]) {
      const recs = stream(120, (i) => ({ 'response_length/mean': scale * (i >= 97 && i <= 100 ? 2.4 : 1 + 0.01 * Math.sin(i)) }));
      const a = detectAlerts('r', recs);
      expect(
        a.map((x) => `${x.rule}:${x.severity}`),
        `scale ${scale}`,
      ).toEqual(['length_runaway:warning']);
      // Raised after 3 points above 1.5× the median (steps 98–100); its window opens at the calm step 97 the rise left.
      expect(raisedAt(a[0])).toBe(100);
      expect(a[0].firstStep).toBe(97);
      expect(a[0].message).toContain(`at step 98`);
    }
    expect(rules(stream(3000, (i) => ({ 'response_length/mean': 270 + i * 0.13 + 20 * Math.sin(i / 3) })))).toEqual([]);
  });

  it('TRL logging every 10 steps: the clip ratio 0.30 → 0.97 → 0.995 is critical at the second point', () => {
    const a = detectAlerts(
      'r',
      stream(3, (i) => ({ 'response_length/clip_ratio': [0.297, 0.966, 0.995][i] }), 10, 10),
    );
    expect(a.map((x) => [x.rule, x.severity, x.firstStep])).toEqual([['length_runaway', 'critical', 20]]);
  });
});

describe('success_collapse on task scores and sparse validations', () => {
  it('a run logging only a score (verl critic/score/mean) is judged on it', () => {
    const recs = stream(200, (i) => ({ 'episode/score_mean': i < 120 ? Math.min(0.7, i / 100) + 0.01 * Math.sin(i) : 0.05 }));
    expect(rules(recs)).toEqual(['success_collapse:episode/score_mean:critical']);
  });

  it('a run logging both a success rate and a score is judged on the success rate only (no duplicate alert)', () => {
    const recs = stream(200, (i) => {
      const s = i < 120 ? Math.min(0.7, i / 100) + 0.01 * Math.sin(i) : 0.05;
      return { 'episode/success_rate': s, 'episode/score_mean': s };
    });
    expect(rules(recs)).toEqual(['success_collapse:episode/success_rate:critical']);
  });

  it('validations without an episode count fall back to the mean of the last 3 validations against its best, beyond the noise of the validations themselves', () => {
    const val = (i: number) => (i < 20 ? 0.6 + 0.01 * Math.sin(i) : 0.1);
    expect(rules(stream(30, (i) => ({ 'val/score_mean': val(i) }), 10, 10))).toEqual(['success_collapse:val/score_mean:critical']);
    // A slip of 0.656 → 0.60 (W&B TreeRL) is within the warn fraction: quiet.
    expect(rules(stream(30, (i) => ({ 'val/score_mean': i < 20 ? 0.656 : 0.6 }), 10, 10))).toEqual([]);
  });
});

describe('every windowed rule counts its patience in steps, whatever the logging interval', () => {
  // [rule, metric, calm value, failing value]: each failing value breaks its rule's threshold on its own.
  const cases = [
    ['validity_drop', 'episode/valid_format_ratio', 0.95, 0.1],
    ['kl_drift', 'actor/ppo_kl', 0.001, 1],
    ['kl_drift', 'actor/kl_loss', 0.01, 5],
    ['clip_fraction_drift', 'actor/pg_clipfrac', 0.005, 0.8],
    ['dead_signal', 'filter/zero_variance_share', 0.3, 1],
    ['train_inference_mismatch', 'mismatch/logprob_abs_max', 0.02, 8],
    ['length_runaway', 'response_length/clip_ratio', 0.01, 0.9],
  ] as const;

  it.each(cases)(
    '%s on %s: a few points when logged every 10 steps, its patience in steps when logged every step',
    (rule, key, calm, bad) => {
      // Onset at the 20th point; the alert's first step, in points after the onset.
      const firstAfter = (every: number) => {
        const a = detectAlerts(
          'r',
          stream(40, (i) => ({ [key]: i < 20 ? calm : bad }), every, every),
        ).filter((x) => x.rule === rule);
        expect(a.length, `${rule} every ${every}`).toBeGreaterThan(0);
        return (raisedAt(a[0]) - (every + 19 * every)) / every;
      };
      const sparse = firstAfter(10);
      expect(sparse).toBeLessThanOrEqual(1);
      expect(firstAfter(1)).toBeGreaterThan(sparse);
    },
  );
});
