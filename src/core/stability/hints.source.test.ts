/**
 * Hints on imported runs: in the source framework's own terms where the mapping is clear (verl's
 * Hydra keys, TRL's GRPOConfig fields), neutral otherwise — never this lab's config paths, presets or
 * `<think>/<action>` format.
 */
import { describe, expect, it } from 'vitest';
import { hintsFor, recipeForRun, recipeOf, sourceRecipeOf, type Hints } from './hints';

/** Words that only make sense for a run trained in this lab. */
const LAB_ONLY = [
  'SAMPO',
  'GRPO_SM',
  '<think>',
  '<action>',
  'algorithm.kl.',
  'algorithm.entropyCoeff',
  'algorithm.policyLoss',
  'rollout.groupSize',
  'rollout.maxResponseTokens',
  'compute.logProbEngine',
  'optim.gradClip',
  'overlong shaping',
  'preset',
];

function all(h: Hints): string {
  return Object.values(h).join('\n');
}

function expectNoLabWords(h: Hints): void {
  const text = all(h);
  for (const w of LAB_ONLY) expect(text, w).not.toContain(w);
}

const VERL_CONFIG = {
  actor_rollout_ref: {
    actor: {
      optim: { lr: 1e-6 },
      clip_ratio: 0.2,
      use_kl_loss: true,
      kl_loss_coef: 0.001,
      entropy_coeff: 0,
      grad_clip: 1,
      policy_loss: { loss_mode: 'vanilla' },
    },
    rollout: { temperature: 1, n: 5 },
  },
  algorithm: { adv_estimator: 'grpo', use_kl_in_reward: false, kl_ctrl: { kl_coef: 0.001 } },
  data: { max_response_length: 512 },
};

describe('hints for an imported verl run', () => {
  it("name verl's own settings with the values its config echoed", () => {
    const h = hintsFor(sourceRecipeOf(VERL_CONFIG, 'verl'));
    expect(h.clipping).toContain('actor_rollout_ref.actor.optim.lr, now 0.000001');
    expect(h.clipping).toContain('actor_rollout_ref.actor.clip_ratio, now 0.2');
    expect(h.clipping).toContain('actor_rollout_ref.actor.policy_loss.loss_mode=gspo');
    expect(h.klDrift).toContain('raise the KL loss coefficient (actor_rollout_ref.actor.kl_loss_coef, now 0.001)');
    expect(h.length).toContain('data.max_response_length, now 512');
    expect(h.deadSignal).toContain('actor_rollout_ref.rollout.n, now 5');
    expect(h.entropyCollapse).toContain('actor_rollout_ref.actor.entropy_coeff, now 0');
    expect(h.entropyCollapse).toContain('actor_rollout_ref.rollout.temperature, now 1');
    expect(h.nonFinite).toContain('actor_rollout_ref.actor.grad_clip, now 1');
    expect(h.formatLoss).toContain('output format its reward checks');
    expectNoLabWords(h);
  });

  it("without a KL term, offer both of verl's KL switches; with the in-reward KL on, raise that one", () => {
    const off = hintsFor(
      sourceRecipeOf({ ...VERL_CONFIG, actor_rollout_ref: { actor: { optim: { lr: 1e-6 }, use_kl_loss: false } } }, 'verl'),
    );
    expect(off.klDrift).toContain('actor_rollout_ref.actor.use_kl_loss=True with actor_rollout_ref.actor.kl_loss_coef');
    expect(off.klDrift).toContain('algorithm.use_kl_in_reward=True with algorithm.kl_ctrl.kl_coef');
    const inReward = hintsFor(sourceRecipeOf({ algorithm: { use_kl_in_reward: true, kl_ctrl: { kl_coef: 0.02 } } }, 'verl-agent'));
    expect(inReward.klDrift).toContain('raise the in-reward KL coefficient (algorithm.kl_ctrl.kl_coef, now 0.02)');
  });

  it('a GSPO run (sequence-level clipping) is not told to switch to it; flattened dotted keys are read too', () => {
    const h = hintsFor(
      sourceRecipeOf({ 'actor_rollout_ref.actor.policy_loss.loss_mode': 'gspo', 'actor_rollout_ref.actor.optim.lr': 3e-6 }, 'verl'),
    );
    expect(h.clipping).toContain('already clips at the sequence level');
    expect(h.clipping).not.toContain('loss_mode=gspo');
    expect(h.clipping).toContain('actor_rollout_ref.actor.optim.lr, now 0.000003');
  });
});

describe('hints for an imported TRL run', () => {
  it("name GRPOConfig's fields, with values when the config has them", () => {
    const h = hintsFor(
      sourceRecipeOf({ learning_rate: 1e-5, beta: 0.04, epsilon: 0.2, max_completion_length: 64, num_generations: 4 }, 'trl'),
    );
    expect(h.clipping).toContain('learning_rate, now 0.00001');
    expect(h.clipping).toContain('epsilon, now 0.2');
    expect(h.clipping).toContain("importance_sampling_level='sequence'");
    expect(h.klDrift).toContain('beta, now 0.04');
    expect(h.length).toContain('max_completion_length, now 64');
    expect(h.deadSignal).toContain('num_generations, now 4');
    expect(h.klStep).toContain('num_iterations');
    expectNoLabWords(h);
  });

  it('beta = 0 (or no config at all): add a KL penalty by setting beta', () => {
    for (const cfg of [{ beta: 0 }, {}]) {
      const h = hintsFor(sourceRecipeOf(cfg, 'trl'));
      expect(h.klDrift).toContain('beta > 0');
      expect(h.clipping).toContain('(learning_rate)');
      expectNoLabWords(h);
    }
  });
});

describe('hints for an imported run of another framework', () => {
  it('are neutral: no setting names, no lab words', () => {
    const h = hintsFor(sourceRecipeOf({ lr: 1 }, 'openrlhf'));
    expect(h.clipping).toContain('lower the learning rate,');
    expect(all(h)).not.toMatch(/actor_rollout_ref|learning_rate|beta/);
    expectNoLabWords(h);
  });
});

describe('recipeForRun', () => {
  it('uses the lab recipe for a lab run and the source recipe for an imported one', () => {
    const lab = { policyLoss: { mode: 'vanilla' } };
    const labCfg = {
      preset: 'grpo',
      algorithm: lab,
      optim: { lr: 0.001 },
      rollout: { temperature: 1, groupSize: 8, maxResponseTokens: 48 },
    };
    expect(recipeForRun({ kind: 'lab', config: labCfg })).toEqual(recipeOf(labCfg));
    expect(recipeForRun({ config: labCfg })).toEqual(recipeOf(labCfg));
    expect(recipeForRun({ kind: 'imported', config: VERL_CONFIG, source: { framework: 'verl' } })).toMatchObject({
      kind: 'source',
      framework: 'verl',
    });
    expect(recipeForRun({ kind: 'imported', config: {}, source: null })).toMatchObject({ kind: 'source', framework: 'other' });
  });
});
