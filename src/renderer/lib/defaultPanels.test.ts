import { describe, expect, it } from 'vitest';
import { METRIC_CATALOG } from '../../shared/metrics';
import { DEFAULT_CHART_KEYS } from './metricKeys';
import { choosePanels, informative, panelCandidates } from './defaultPanels';

const CATALOG = METRIC_CATALOG.map((d) => d.key);

// The catalog keys a verl PPO console log feeds (play-verl_verl_qwen2_7b_min.log's keyMap) and some of its own.
const VERL = [
  'actor/entropy',
  'actor/grad_norm',
  'actor/kl_coef',
  'actor/kl_loss',
  'actor/lr',
  'actor/pg_clipfrac',
  'actor/pg_clipfrac_lower',
  'actor/pg_loss',
  'actor/ppo_kl',
  'critic/advantages_mean',
  'critic/vf_explained_var',
  'critic/vf_loss',
  'episode/reward_max',
  'episode/reward_mean',
  'episode/reward_min',
  'episode/score_mean',
  'perf/logprob_s',
  'perf/rollout_s',
  'perf/step_s',
  'perf/tokens_per_s',
  'perf/update_s',
  'prompt_length/mean',
  'response_length/clip_ratio',
  'response_length/mean',
  'timing_s/testing',
  'val/score_mean',
];

describe('default panels of imported runs', () => {
  it('puts the validation score and task score first, then the dashboard keys the runs logged', () => {
    const c = panelCandidates(VERL, CATALOG, DEFAULT_CHART_KEYS);
    expect(c.slice(0, 3)).toEqual(['val/score_mean', 'episode/score_mean', 'episode/reward_mean']);
    expect(c).not.toContain('episode/success_rate');
    expect(c.indexOf('actor/grad_norm')).toBeLessThan(c.indexOf('actor/pg_clipfrac_lower'));
  });

  it('leaves out a constant KL coefficient, an LR logged as 0 and keys with no finite value; keeps a validation logged once', () => {
    const series: Record<string, { y: (number | null)[] }[]> = {
      'val/score_mean': [{ y: [null, null, 0.821] }],
      'actor/kl_coef': [{ y: [0.001, 0.001, 0.001] }, { y: [0.001, 0.001] }],
      'actor/lr': [{ y: [0, 0, 0] }],
      'actor/kl_loss': [{ y: [null, null] }],
      'actor/entropy': [{ y: [0.24, 0.2, 0.026] }],
      'actor/grad_norm': [{ y: [2, 2] }, { y: [3] }],
    };
    expect(informative('actor/kl_coef', series['actor/kl_coef'])).toBe(false);
    expect(informative('val/score_mean', series['val/score_mean'])).toBe(true);
    // Two runs with one constant value each, but different between them: it compares something.
    expect(informative('actor/grad_norm', series['actor/grad_norm'])).toBe(true);
    const chosen = choosePanels(
      ['val/score_mean', 'actor/kl_coef', 'actor/lr', 'actor/kl_loss', 'actor/entropy', 'actor/grad_norm'],
      (k) => series[k] ?? [],
    );
    expect(chosen).toEqual(['val/score_mean', 'actor/entropy', 'actor/grad_norm']);
  });

  it('caps the panels at the count asked', () => {
    const keys = Array.from({ length: 30 }, (_, i) => `own/k${i}`);
    expect(choosePanels(keys, () => [{ y: [1, 2] }], 10)).toHaveLength(10);
  });
});
