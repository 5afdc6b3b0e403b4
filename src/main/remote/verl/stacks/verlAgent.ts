/**
 * verl-agent, langfengQ/verl-agent at d0b9724 (read through its mirror vanzll/verl-agent, whose head is that
 * commit): upstream verl 0.3.1.dev's `verl.trainer.main_ppo` with one config for every environment,
 * verl/trainer/config/ppo_trainer.yaml, which adds the `env.*` section, `algorithm.gigpo.*`,
 * `algorithm.filter_groups.{enable,max_num_gen_batches}` and the invalid-action penalty under
 * `actor_rollout_ref.actor`. Its actor (verl/workers/actor/dp_actor.py) takes policy_loss.loss_mode vanilla or
 * gspo and adds the KL loss whenever use_kl_loss is on. It has no sequence masking, SAPO, CISPO, EMPG or
 * filtering cold start; examples/gigpo_trainer/run_{alfworld,webshop,sokoban}.sh are its launches.
 */
import type { VerlStackDef } from '../types';

const YAML = 'verl/trainer/config/ppo_trainer.yaml';
const ENTRY = {
  module: 'verl.trainer.main_ppo',
  configDir: 'verl/trainer/config',
  configName: 'ppo_trainer',
  source: 'verl/trainer/main_ppo.py',
} as const;

export const VERL_AGENT: VerlStackDef = {
  name: 'verl-agent',
  label: 'verl-agent',
  repo: 'langfengQ/verl-agent@d0b9724',
  entry: { alfworld: ENTRY, webshop: ENTRY, sokoban: ENTRY },
  dataDir: '$HOME/data/verl-agent/text',
  invalidPenalty: {
    use: { key: 'actor_rollout_ref.actor.use_invalid_action_penalty', source: YAML },
    coef: { key: 'actor_rollout_ref.actor.invalid_action_penalty_coef', source: YAML },
  },
  lossModes: ['vanilla', 'gspo'],
  // verl/trainer/ppo/ray_trainer.py::AdvantageEstimator; its grpo pools every turn row of a group (cross steps).
  estimator: (lab, crossSteps) => {
    switch (lab) {
      case 'grpo':
        return crossSteps ? 'grpo' : null;
      case 'drgrpo':
        return 'grpo';
      case 'gigpo':
        return 'gigpo';
      case 'rloo':
        return 'rloo';
      case 'grpo_traj':
      case 'empg':
        return null;
    }
  },
  estimatorNames: ['gae', 'grpo', 'reinforce_plus_plus', 'reinforce_plus_plus_baseline', 'remax', 'rloo', 'grpo_passk', 'gigpo'],
  addedKeys: {},
  caveats: () => [],
};
