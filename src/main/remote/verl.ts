/**
 * The hand-off of a lab preset to the paper's own stack: verl's `python3 -m verl.trainer.main_ppo` with Hydra
 * overrides, in the shape verl-agent's example launches use (examples/gigpo_trainer/run_*.sh: data prepared by
 * `examples.data_preprocess.prepare --mode text`, the group size in `env.rollout.n`, GiGPO and the invalid-action
 * penalty under `algorithm.gigpo.*` and `actor_rollout_ref.actor.*invalid_action*`). Upstream verl's keys
 * (verl/trainer/config/ppo_trainer.yaml: loss_agg_mode, policy_loss.loss_mode, clip_ratio_low/high/c, kl_loss_*,
 * algorithm.adv_estimator, norm_adv_by_std_in_grpo) keep their meaning there.
 *
 * Every lab field is either mapped (VERL_MAP), or listed as needing code that only ARLArena's fork has (no key
 * of verl or verl-agent carries it; the launch names it in a comment instead of inventing a key), or as having no
 * verl equivalent (the lab's tiny-model and laptop knobs). The README's mapping table is this file's table.
 */
import type { RunConfig } from '../../core/config/types';

export const VERL_ENVS = { alfworld: 'household', webshop: 'shop', sokoban: 'sokoban' } as const;
export type VerlEnv = keyof typeof VERL_ENVS;

/** verl-agent's env.env_name per environment (its example launches). */
const ENV_NAME: Record<VerlEnv, string> = { alfworld: 'alfworld/AlfredTWEnv', webshop: 'Webshop', sokoban: 'Sokoban' };

export interface VerlLaunch {
  /** The main_ppo overrides, in order. */
  readonly overrides: readonly string[];
  /** Lab settings that need ARLArena's fork of verl on the cluster (no upstream / verl-agent key). */
  readonly forkOnly: readonly string[];
  /** Lab settings left out: no verl equivalent. */
  readonly noEquivalent: readonly string[];
  /** The full shell command (data preparation, then main_ppo). */
  readonly command: string;
}

export interface VerlOptions {
  readonly env: VerlEnv;
  readonly model: string;
  readonly gpus: number;
  readonly experiment?: string;
}

/** How the lab's advantage estimators become verl's. */
function advantage(c: RunConfig): { overrides: string[]; fork: string[] } {
  const a = c.algorithm.advantage;
  switch (a.estimator) {
    case 'grpo':
      return { overrides: ['algorithm.adv_estimator=grpo', `algorithm.norm_adv_by_std_in_grpo=${a.normByStd ? 'True' : 'False'}`], fork: [] };
    case 'drgrpo':
      // Dr. GRPO = GRPO without the std division (verl's documented recipe sets norm_adv_by_std_in_grpo=False).
      return { overrides: ['algorithm.adv_estimator=grpo', 'algorithm.norm_adv_by_std_in_grpo=False'], fork: [] };
    case 'rloo':
      return { overrides: ['algorithm.adv_estimator=rloo'], fork: [] };
    case 'gigpo':
      return {
        overrides: ['algorithm.adv_estimator=gigpo', `algorithm.gamma=${a.gamma}`, `algorithm.gigpo.step_advantage_w=${a.stepAdvantageW}`, `algorithm.gigpo.mode=${a.gigpoMode}`],
        fork: [],
      };
    case 'grpo_traj':
      return { overrides: ['algorithm.adv_estimator=grpo'], fork: ['algorithm.advantage.estimator=grpo_traj (the lab scores whole trajectories; verl-agent GRPO uses the episode return per step)'] };
    case 'empg':
      return { overrides: [], fork: [`algorithm.advantage.estimator=empg (k ${a.empg.k}, kf ${a.empg.kf}, ζ ${a.empg.zeta}): entropy-modulated advantages are in ARLArena's fork only`] };
  }
}

function q(v: string): string {
  return /^[A-Za-z0-9_./:=,+$-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

export function buildVerlLaunch(c: RunConfig, o: VerlOptions): VerlLaunch {
  const p = c.algorithm.policyLoss;
  const adv = advantage(c);
  const forkOnly: string[] = [...adv.fork];
  const noEquivalent: string[] = [];
  const ov: string[] = [];
  // Data: verl-agent builds placeholder prompt files; the environment produces the real prompts.
  ov.push('data.train_files=$HOME/data/verl-agent/text/train.parquet', 'data.val_files=$HOME/data/verl-agent/text/test.parquet');
  ov.push(`data.train_batch_size=${c.rollout.tasksPerStep}`, `data.max_response_length=${c.rollout.maxResponseTokens}`, 'data.return_raw_chat=True');
  ov.push(`actor_rollout_ref.model.path=${o.model}`);
  // Loss aggregation: the four names are verl's own.
  ov.push(`actor_rollout_ref.actor.loss_agg_mode=${c.algorithm.aggregation}`);
  // Policy loss and clipping.
  if (p.mode === 'vanilla' || p.mode === 'gspo') ov.push(`actor_rollout_ref.actor.policy_loss.loss_mode=${p.mode}`);
  else forkOnly.push(`algorithm.policyLoss.mode=${p.mode}${p.mode === 'sapo' ? ` (τ+ ${p.tauPos}, τ- ${p.tauNeg})` : ''}: not a loss_mode of upstream verl or verl-agent`);
  ov.push(`actor_rollout_ref.actor.clip_ratio_low=${p.clipRatioLow}`, `actor_rollout_ref.actor.clip_ratio_high=${p.clipRatioHigh}`, `actor_rollout_ref.actor.clip_ratio_c=${p.clipRatioC}`);
  if (p.seqMask.enabled) forkOnly.push(`algorithm.policyLoss.seqMask (δ ${p.seqMask.delta}): sequence masking is ARLArena's use_seq_mask flag (paper spec §1.2 e)`);
  ov.push(...adv.overrides);
  // KL: the lab's four estimator names are verl's kl_loss_type / kl_penalty names.
  const kl = c.algorithm.kl;
  if (kl.enabled && !kl.inReward) forkOnly.push("KL loss: in ARLArena's fork the KL enters the loss only with its kl_loss_update=True beside use_kl_loss (paper spec §1.5)");
  if (kl.enabled && !kl.inReward) ov.push('actor_rollout_ref.actor.use_kl_loss=True', `actor_rollout_ref.actor.kl_loss_coef=${kl.coef}`, `actor_rollout_ref.actor.kl_loss_type=${kl.type}`, 'algorithm.use_kl_in_reward=False');
  else if (kl.enabled && kl.inReward) ov.push('actor_rollout_ref.actor.use_kl_loss=False', 'algorithm.use_kl_in_reward=True', `algorithm.kl_penalty=${kl.type}`, `algorithm.kl_ctrl.kl_coef=${kl.coef}`);
  else ov.push('actor_rollout_ref.actor.use_kl_loss=False', 'algorithm.use_kl_in_reward=False');
  ov.push(`actor_rollout_ref.actor.entropy_coeff=${c.algorithm.entropyCoeff}`);
  // Invalid-action penalty: verl-agent's keys.
  if (c.algorithm.invalidPenalty > 0) ov.push('actor_rollout_ref.actor.use_invalid_action_penalty=True', `actor_rollout_ref.actor.invalid_action_penalty_coef=${c.algorithm.invalidPenalty}`);
  else ov.push('actor_rollout_ref.actor.use_invalid_action_penalty=False');
  // Dynamic filtering (DAPO's dynamic sampling): verl-agent's algorithm.filter_groups.
  const f = c.algorithm.filter;
  if (f.enabled) {
    ov.push('algorithm.filter_groups.enable=True', 'algorithm.filter_groups.metric=traj_reward', `algorithm.filter_groups.max_num_gen_batches=${f.maxRounds}`);
    if (f.coldStartSteps > 0) forkOnly.push(`algorithm.filter.coldStartSteps=${f.coldStartSteps}: ARLArena's filter_groups cold_start_steps (filtering starts after it; paper spec §1.4)`);
  }
  if (c.algorithm.overlong.enabled) forkOnly.push(`algorithm.overlong (buffer ${c.algorithm.overlong.bufferFrac}, factor ${c.algorithm.overlong.penaltyFactor}): DAPO's overlong shaping lives in verl's DAPO recipe, not main_ppo`);
  // Optimiser.
  const m = c.optim;
  ov.push(`actor_rollout_ref.actor.optim.lr=${m.lr}`, `actor_rollout_ref.actor.optim.weight_decay=${m.weightDecay}`, `actor_rollout_ref.actor.grad_clip=${m.gradClip}`, `actor_rollout_ref.actor.ppo_epochs=${m.epochs}`);
  ov.push(`actor_rollout_ref.actor.ppo_mini_batch_size=${c.rollout.tasksPerStep}`);
  // Rollout sampling.
  ov.push(`actor_rollout_ref.rollout.temperature=${c.rollout.temperature}`, `actor_rollout_ref.rollout.top_p=${c.rollout.topP}`, `actor_rollout_ref.rollout.top_k=${c.rollout.topK > 0 ? c.rollout.topK : -1}`, `actor_rollout_ref.rollout.val_kwargs.temperature=${c.training.valTemperature}`);
  // Environment (verl-agent): group size lives here, not in actor_rollout_ref.rollout.n.
  ov.push(`env.env_name=${ENV_NAME[o.env]}`, `env.seed=${c.seed}`, `env.max_steps=${c.env.maxSteps}`, `env.history_length=${c.env.historyWindow}`, `env.rollout.n=${c.rollout.groupSize}`);
  if (o.env === 'sokoban') {
    const s = c.env.settings;
    ov.push(`env.sokoban.dim_room=[${s.size},${s.size}]`, `env.sokoban.num_boxes=${s.boxes}`, `env.sokoban.search_depth=${s.searchDepth}`);
  }
  // Trainer: console + file loggers (the file logger's JSONL and the console log both import into the lab).
  ov.push('trainer.logger=[console,file]', `trainer.n_gpus_per_node=${o.gpus}`, 'trainer.nnodes=1', 'trainer.critic_warmup=0', `trainer.total_training_steps=${c.training.steps}`);
  ov.push(`trainer.test_freq=${c.training.validateEvery > 0 ? c.training.validateEvery : -1}`, `trainer.val_before_train=${c.training.validateBeforeTraining ? 'True' : 'False'}`, `trainer.save_freq=${c.training.checkpointEvery > 0 ? c.training.checkpointEvery : -1}`);
  ov.push(`trainer.project_name=arlarena`, `trainer.experiment_name=${o.experiment ?? `${c.preset}_${o.env}`}`);
  noEquivalent.push('model.* (the lab trains its own tiny transformer; verl loads --model)', 'compute.* (tfjs / onnxruntime backends)', 'warmStart.* (behaviour-cloning warm start; verl starts from the HF checkpoint)', 'optim.beta1/beta2/eps (verl uses AdamW defaults)', 'optim.miniBatchRows (rows; verl counts prompts: ppo_mini_batch_size = one batch)', 'training.valEpisodes, training.sampleTrajectories', 'env.settings other than Sokoban room/boxes/depth');
  const prepare = `python3 -m examples.data_preprocess.prepare --mode text --train_data_size ${c.rollout.tasksPerStep} --val_data_size ${Math.max(1, c.training.valEpisodes)}`;
  const command = `${prepare} && \\\npython3 -m verl.trainer.main_ppo \\\n${ov.map((x) => `  ${q(x)}`).join(' \\\n')}`;
  return { overrides: ov, forkOnly, noEquivalent, command };
}
