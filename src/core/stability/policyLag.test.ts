/**
 * A run with rollout.policyLag > 0 (the pressure ladder's level 3): its rollouts' behaviour log-probs against π_old
 * hold the policy's own move over k updates, so neither engine-gap rule may read them as two engines disagreeing.
 * The first four steps are a level-3 sokoban GRPO run's (seed 2, before the trainer logged them as offpolicy/lag_*):
 * train_inference_mismatch called it critical at step 2 and the ladder counted a collapse.
 */
import { describe, expect, it } from 'vitest';
import { detectAlerts } from './detector';
import { recipeOf } from './hints';
import { resolveConfig } from '../config/resolve';
import type { MetricRecord } from '../../shared/metrics';

const LEVEL3 = [
  { max: 5.06e-6, mean: 1.84e-7, kl: 4.9e-9 },
  { max: 8.79, mean: 0.13, kl: 0.0728 },
  { max: 3.65, mean: 0.0616, kl: 0.0221 },
  { max: 8.52, mean: 0.109, kl: 0.0599 },
];
// Then the per-step move grows as the policy speeds up (to 0.8 nats of KL by step 24): a rise past 10× the start.
const recs: MetricRecord[] = Array.from({ length: 24 }, (_, i) => {
  const s = LEVEL3[i] ?? { max: 9, mean: 0.15, kl: 0.06 + (i - 3) * 0.037 };
  return {
    step: i + 1,
    values: { 'mismatch/logprob_abs_max': s.max, 'mismatch/logprob_abs_mean': s.mean, 'rollout_corr/kl': s.kl },
  };
});
const recipe = (pressure: number) => recipeOf(resolveConfig('grpo', 'sokoban', { 'training.pressure': pressure }).config);
const rules = (pressure: number) => [...new Set(detectAlerts('r', recs, undefined, recipe(pressure)).map((a) => a.rule))].sort();

describe('engine-gap rules under a policy lag', () => {
  it('the recipe carries rollout.policyLag: 1 at level 3, 0 at level 0', () => {
    expect([recipe(3)?.policyLag, recipe(0)?.policyLag]).toEqual([1, 0]);
  });

  it('level 3: neither train_inference_mismatch nor engine_gap fires on the lag; without the lag both do, critical', () => {
    expect(rules(3)).not.toContain('train_inference_mismatch');
    expect(rules(3)).not.toContain('engine_gap');
    const on = detectAlerts('r', recs, undefined, recipe(0));
    expect(on.filter((a) => a.rule === 'train_inference_mismatch' && a.severity === 'critical').map((a) => a.firstStep)).toEqual([2]);
    expect(on.some((a) => a.rule === 'engine_gap' && a.metric === 'rollout_corr/kl' && a.severity === 'critical')).toBe(true);
  });
});
