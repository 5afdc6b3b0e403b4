/**
 * The paper's own code, WillDreamer/ARLArena at dc1da9f (verl 0.5.0.dev plus verl-agent's multi-turn rollout, one
 * recipe per environment). Read from the repository, file by file:
 * - entry points: recipe/{world,shop,game}_agent/main_*_agent.py, each `@hydra.main(config_path="config",
 *   config_name=…)`; the configs take verl/trainer/config/ppo_trainer.yaml as their default through
 *   `hydra.searchpath: file://verl/trainer/config` (relative to the checkout, so the run starts from its root).
 * - the invalid-action penalty is read at the top level (`self.config.use_invalid_action_penalty`,
 *   recipe/*_agent/ppo/ray_trainer.py) and declared there in the three env yamls;
 * - losses: verl/trainer/ppo/core_algos.py registers vanilla, drgrpo, gspo, gpg, clip_cov, kl_cov, geo_mean,
 *   aepo, sapo, cispo; verl/workers/actor/dp_actor.py picks one by policy_loss.loss_mode, and adds the KL loss to
 *   the loss only with kl_loss_update (otherwise it is logged);
 * - sequence masking and SAPO's temperatures: verl/trainer/config/actor/actor.yaml (use_seq_mask,
 *   seq_mask_delta, tau_pos, tau_neg);
 * - cold start: agent_system/multi_turn_rollout/rollout_loop.py reads algorithm.filter_groups.cold_start_steps
 *   (declared in alfworld_.yaml and webshop_.yaml, not in game_.yaml; the code reads it with hasattr).
 */
import type { VerlStackDef } from '../types';

const ENV_YAML = {
  alfworld: 'recipe/world_agent/config/alfworld_.yaml',
  webshop: 'recipe/shop_agent/config/webshop_.yaml',
  sokoban: 'recipe/game_agent/config/game_.yaml',
} as const;
const ACTOR_YAML = 'verl/trainer/config/actor/actor.yaml';

export const ARLARENA: VerlStackDef = {
  name: 'arlarena',
  label: "ARLArena (the paper's code)",
  repo: 'WillDreamer/ARLArena@dc1da9f',
  entry: {
    alfworld: {
      module: 'recipe.world_agent.main_world_agent',
      configDir: 'recipe/world_agent/config',
      configName: 'alfworld_',
      source: 'recipe/world_agent/main_world_agent.py',
    },
    webshop: {
      module: 'recipe.shop_agent.main_shop_agent',
      configDir: 'recipe/shop_agent/config',
      configName: 'webshop_',
      source: 'recipe/shop_agent/main_shop_agent.py',
    },
    sokoban: {
      module: 'recipe.game_agent.main_game_agent',
      configDir: 'recipe/game_agent/config',
      configName: 'game_',
      source: 'recipe/game_agent/main_game_agent.py',
    },
  },
  dataDir: '$HOME/data/text',
  invalidPenalty: {
    use: { key: 'use_invalid_action_penalty', source: 'recipe/*_agent/config/*_.yaml (top level)' },
    coef: { key: 'invalid_action_penalty_coef', source: 'recipe/*_agent/config/*_.yaml (top level)' },
  },
  lossModes: ['vanilla', 'gspo', 'sapo', 'cispo'],
  seqMask: {
    use: { key: 'actor_rollout_ref.actor.use_seq_mask', source: ACTOR_YAML },
    delta: { key: 'actor_rollout_ref.actor.seq_mask_delta', source: ACTOR_YAML },
  },
  sapoTau: {
    pos: { key: 'actor_rollout_ref.actor.tau_pos', source: ACTOR_YAML },
    neg: { key: 'actor_rollout_ref.actor.tau_neg', source: ACTOR_YAML },
  },
  klLossUpdate: {
    key: 'actor_rollout_ref.actor.kl_loss_update',
    source: `${ENV_YAML.alfworld}, ${ENV_YAML.webshop}; read in verl/workers/actor/dp_actor.py`,
  },
  coldStart: {
    key: 'algorithm.filter_groups.cold_start_steps',
    source: `${ENV_YAML.alfworld}, ${ENV_YAML.webshop}; read in agent_system/multi_turn_rollout/rollout_loop.py`,
  },
  // recipe/*_agent/ppo/ray_trainer.py::AdvantageEstimator. `vanilla_grpo` is GRPO with one sample per trajectory
  // (compute_mean_std_cross_steps=False), the lab's grpo_traj. Dr. GRPO is written as grpo without the std
  // division: ARLArena's own `drgrpo` also switches the loss to its drgrpo mode and seq-mean-token-sum.
  estimator: (lab, crossSteps) => {
    switch (lab) {
      case 'grpo':
        return crossSteps ? 'grpo' : 'vanilla_grpo';
      case 'drgrpo':
        return 'grpo';
      case 'grpo_traj':
        return 'vanilla_grpo';
      case 'gigpo':
        return 'gigpo';
      case 'empg':
        return 'empg';
      case 'rloo':
        return 'rloo';
    }
  },
  estimatorNames: [
    'grpo',
    'vanilla_grpo',
    'drgrpo',
    'gigpo',
    'empg',
    'rloo',
    'gspo',
    'sapo',
    'cispo',
    'dapo',
    'aepo',
    'grpo_passk',
    'reinforce_plus_plus',
    'remax',
    'gae',
  ],
  addedKeys: { sokoban: ['actor_rollout_ref.actor.kl_loss_update', 'algorithm.filter_groups.cold_start_steps'] },
  caveats: (env, coldStartSteps, filterOn) => {
    if (!filterOn || coldStartSteps <= 0 || env === 'alfworld') return [];
    // Only the world agent's trainer passes the training step to the rollout (multi_turn_loop's
    // current_global_step defaults to 0); the shop and game trainers do not, so filtering never passes its cold start.
    const trainer = env === 'webshop' ? 'recipe/shop_agent/ppo/ray_trainer.py' : 'recipe/game_agent/ppo/ray_trainer.py';
    return [
      `${trainer} does not pass the training step to the rollout, so with cold_start_steps=${coldStartSteps} dynamic filtering never starts there; --set algorithm.filter.coldStartSteps=0 filters from the first step`,
    ];
  },
};
