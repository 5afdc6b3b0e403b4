import { describe, expect, it } from 'vitest';
import { ruleCoverage, needsMet } from './coverage';
import { resolveDetectorConfig } from './config';
import { RULES } from './rules/index';
import { SOURCE_NAMED_KEYS } from './rules/engineGap';
import { METRIC_CATALOG as METRICS } from '../../shared/metrics';

const byRule = (keys: string[], cfg = resolveDetectorConfig()) => new Map(ruleCoverage(keys, cfg).map((c) => [c.rule, c]));

describe('ruleCoverage', () => {
  it('lists every rule of the catalog once, in catalog order', () => {
    expect(ruleCoverage([]).map((c) => c.rule)).toEqual(RULES.map((r) => r.id));
  });

  it('a lab run (every catalog key) can be judged by every rule', () => {
    const cov = ruleCoverage(METRICS.map((m) => m.key));
    expect(cov.filter((c) => !c.applicable).map((c) => c.rule)).toEqual([]);
    expect(cov.every((c) => c.missing.length === 0)).toBe(true);
  });

  it('a TRL-like run (entropy, grad norm, reward, length; no zero-variance share, no mismatch) gets the right rules', () => {
    const c = byRule([
      'actor/entropy',
      'actor/grad_norm',
      'episode/reward_mean',
      'response_length/mean',
      'response_length/clip_ratio',
      'actor/kl_loss',
    ]);
    expect(c.get('entropy_shift')!.applicable).toBe(true);
    expect(c.get('grad_norm_spike')!.applicable).toBe(true);
    expect(c.get('success_collapse')!.applicable).toBe(true);
    expect(c.get('success_collapse')!.present).toEqual(['episode/reward_mean']);
    expect(c.get('kl_drift')!.applicable).toBe(true);
    expect(c.get('length_runaway')!.present).toEqual(['response_length/clip_ratio', 'response_length/mean']);
    expect(c.get('dead_signal')).toMatchObject({ applicable: false, missing: ['filter/zero_variance_share'], needs: 'all' });
    expect(c.get('train_inference_mismatch')).toMatchObject({
      applicable: false,
      missing: ['mismatch/logprob_abs_max', 'mismatch/logprob_abs_mean'],
      needs: 'any',
    });
    expect(c.get('validity_drop')!.applicable).toBe(false);
    expect(c.get('clip_fraction_drift')!.applicable).toBe(false);
  });

  it('"any of" needs one key only; "all of" needs each', () => {
    expect(needsMet({ anyOf: ['a', 'b'] }, new Set(['b']))).toBe(true);
    expect(needsMet({ anyOf: ['a', 'b'] }, new Set(['c']))).toBe(false);
    expect(needsMet({ allOf: ['a', 'b'] }, new Set(['a']))).toBe(false);
    expect(needsMet({ allOf: ['a', 'b'] }, new Set(['a', 'b', 'c']))).toBe(true);
  });

  it('non_finite applies to any run with a metric, and to none without', () => {
    expect(byRule(['some/unknown_key']).get('non_finite')!.applicable).toBe(true);
    expect(byRule([]).get('non_finite')).toMatchObject({ applicable: false, missing: ['any metric'] });
  });

  it('a rule switched off in the config is not applicable even with its metrics, and says it is disabled', () => {
    const c = byRule(['actor/grad_norm'], resolveDetectorConfig({ gradNormSpike: { enabled: false } }));
    expect(c.get('grad_norm_spike')).toMatchObject({ applicable: false, enabled: false, missing: [] });
  });

  it('every key a rule needs is a catalog key or a source key read under its own name (a typo would make the rule never apply)', () => {
    const known = new Set([...METRICS.map((m) => m.key), ...SOURCE_NAMED_KEYS]);
    for (const r of RULES) {
      for (const k of [...(r.needs.allOf ?? []), ...(r.needs.anyOf ?? [])])
        if (k !== '*') expect(known.has(k), `${r.id} needs ${k}`).toBe(true);
    }
  });
});
