/**
 * A lab preset as a launch of one verl stack (stacks/): the stack's entry point and config for the environment,
 * then one Hydra override per knob, each at the key where that stack has it. A lab setting the stack has no key
 * for is an error naming the stack that has it (the launch would silently train something else); lab settings
 * that no verl stack has by design (the tiny model, tfjs compute, the warm start) are listed, not set.
 *
 * Scale: by default the lab config is resolved with the paper's per-env values (paperScale.ts) under the
 * user's --set; with `laptop` the preset's own values stay. Either way the Hugging Face model replaces the lab's
 * tiny one, so the lab's model-size limits do not apply.
 */
import { resolveConfig } from '../../../core/config/index';
import type { FieldValue } from '../../../core/config/fields';
import type { OverrideValue, RunConfig } from '../../../core/config/types';
import { HF_MODEL_LAB_OVERRIDES, PAPER_SCALE, type VerlInfra } from './paperScale';
import { VERL_ENVS, type VerlEntry, type VerlEnv, type VerlStackDef } from './types';

/** A lab setting the chosen stack cannot express; the message names the field, its value and the fix. */
export class VerlMappingError extends Error {}

export interface VerlLaunchOptions {
  readonly stack: VerlStackDef;
  readonly env: VerlEnv;
  /** The Hugging Face model verl loads (also π_ref). */
  readonly model: string;
  /** GPUs per node. */
  readonly gpus: number;
  readonly experiment?: string;
}

export interface VerlLaunch {
  readonly stack: VerlStackDef;
  readonly entry: VerlEntry;
  /** Hydra overrides in order, as written on the command line (`++key=value` for a key the env's yaml lacks). */
  readonly overrides: readonly string[];
  /** The data preparation command (placeholder prompt files; the environments make the real prompts). */
  readonly prepare: string;
  /** Preparation, then the entry point with every override: what runs on the cluster. */
  readonly command: string;
  /** Behaviours of the stack's code that change this launch (printed with it). */
  readonly caveats: readonly string[];
  /** Lab settings that no verl stack has (left out by design). */
  readonly noEquivalent: readonly string[];
}

/** The lab config a launch is built from: preset, paper scale unless laptop, then the user's --set. */
export function verlLabConfig(
  preset: string,
  env: VerlEnv,
  sets: Readonly<Record<string, OverrideValue>>,
  laptop: boolean,
): { config: RunConfig | null; issues: { field: string; message: string }[] } {
  const paper: Readonly<Record<string, FieldValue>> = laptop ? {} : PAPER_SCALE[env].lab;
  return resolveConfig(preset, VERL_ENVS[env], { ...HF_MODEL_LAB_OVERRIDES, ...paper, ...sets });
}

function q(v: string): string {
  return /^[A-Za-z0-9_./:=,+$-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

const b = (x: boolean) => (x ? 'True' : 'False');
const gcd = (a: number, c: number): number => (c === 0 ? a : gcd(c, a % c));

export function buildVerlLaunch(c: RunConfig, infra: VerlInfra, o: VerlLaunchOptions): VerlLaunch {
  const s = o.stack;
  const a = c.algorithm;
  const p = a.policyLoss;
  const added = new Set(s.addedKeys[o.env] ?? []);
  const ov: string[] = [];
  const set = (key: string, value: string | number) => ov.push(`${added.has(key) ? '++' : ''}${key}=${value}`);
  const refuse = (field: string, value: unknown, why: string): never => {
    throw new VerlMappingError(`${field} = ${String(value)}: ${why}`);
  };
  const other = s.name === 'arlarena' ? 'verl-agent' : 'arlarena';

  // Lab settings with no key in any verl stack that would change training if they differ from what verl does.
  if (a.advantage.epsilon !== 1e-6)
    refuse(
      'algorithm.advantage.epsilon',
      a.advantage.epsilon,
      'both stacks divide by σ + 1e-6 (hard-coded); set it back to 1e-6 for a verl launch',
    );
  if (a.overlong.enabled)
    refuse(
      'algorithm.overlong.enabled',
      true,
      "neither stack's entry point has an overlong-shaping key (ARLArena applies it only inside adv_estimator=dapo); set it to false for a verl launch",
    );
  if (p.mode === 'sapo' && p.sapoPerTokenTau)
    refuse(
      'algorithm.policyLoss.sapoPerTokenTau',
      true,
      "ARLArena picks SAPO's τ by the row-mean advantage only; set it to false for a verl launch",
    );
  const m = c.optim;
  if (m.beta1 !== 0.9 || m.beta2 !== 0.999 || m.eps !== 1e-8)
    refuse(
      'optim.beta1/beta2/eps',
      `${m.beta1}/${m.beta2}/${m.eps}`,
      "verl's AdamW runs with torch's defaults 0.9/0.999/1e-8 and has no key for them; set them back for a verl launch",
    );

  // Data: placeholder prompt files, one training batch per "epoch" (prepare writes exactly B training prompts).
  set('data.train_files', `${s.dataDir}/train.parquet`);
  set('data.val_files', `${s.dataDir}/test.parquet`);
  set('data.train_batch_size', c.rollout.tasksPerStep);
  set('data.val_batch_size', Math.min(infra.valBatchSize, c.training.valEpisodes));
  set('data.max_prompt_length', infra.maxPromptLength);
  set('data.max_response_length', c.rollout.maxResponseTokens);
  set('data.filter_overlong_prompts', 'True');
  set('data.truncation', 'error');
  set('data.return_raw_chat', 'True');

  // Model and memory (the scripts' values; the micro-batches must divide each GPU's share of a mini-batch).
  set('actor_rollout_ref.model.path', o.model);
  set('actor_rollout_ref.model.use_remove_padding', 'True');
  set('actor_rollout_ref.model.enable_gradient_checkpointing', 'True');
  if (m.miniBatchRows % o.gpus !== 0)
    refuse(
      'optim.miniBatchRows',
      m.miniBatchRows,
      `verl splits a mini-batch over the ${o.gpus} GPUs (--gpus), so it must be a multiple of ${o.gpus}; --set optim.miniBatchRows=${Math.max(o.gpus, Math.round(m.miniBatchRows / o.gpus) * o.gpus)} or change --gpus`,
    );
  const perGpu = m.miniBatchRows / o.gpus;

  // Loss aggregation (dimension 1) and clipping (dimension 2).
  set('actor_rollout_ref.actor.loss_agg_mode', a.aggregation);
  if (!s.lossModes.includes(p.mode))
    refuse(
      'algorithm.policyLoss.mode',
      p.mode,
      `${s.label} has no ${p.mode} loss (policy_loss.loss_mode takes ${s.lossModes.join(', ')}); use --stack ${other}`,
    );
  set('actor_rollout_ref.actor.policy_loss.loss_mode', p.mode);
  set('actor_rollout_ref.actor.clip_ratio_low', p.clipRatioLow);
  set('actor_rollout_ref.actor.clip_ratio_high', p.clipRatioHigh);
  set('actor_rollout_ref.actor.clip_ratio_c', p.clipRatioC);
  if (p.mode === 'sapo' && s.sapoTau) {
    set(s.sapoTau.pos.key, p.tauPos);
    set(s.sapoTau.neg.key, p.tauNeg);
  }
  if (s.seqMask) {
    set(s.seqMask.use.key, b(p.seqMask.enabled));
    if (p.seqMask.enabled) set(s.seqMask.delta.key, p.seqMask.delta);
  } else if (p.seqMask.enabled)
    refuse('algorithm.policyLoss.seqMask.enabled', true, `${s.label} has no sequence masking; use --stack ${other}`);

  // Advantage (dimension 3).
  const adv = a.advantage;
  const estimator = s.estimator(adv.estimator, adv.crossSteps);
  set(
    'algorithm.adv_estimator',
    estimator ??
      refuse(
        'algorithm.advantage.estimator',
        `${adv.estimator}${adv.estimator === 'grpo' ? ' with crossSteps=false' : ''}`,
        `${s.label} has no such estimator (its adv_estimator takes ${s.estimatorNames.join(', ')}); use --stack ${other}`,
      ),
  );
  set('algorithm.gamma', adv.gamma);
  if (adv.estimator === 'gigpo') {
    set('algorithm.gigpo.step_advantage_w', adv.stepAdvantageW);
    set('algorithm.gigpo.mode', adv.gigpoMode);
  } else {
    // Dr. GRPO is GRPO without the std division.
    set('algorithm.norm_adv_by_std_in_grpo', b(adv.estimator === 'drgrpo' ? false : adv.normByStd));
  }
  if (adv.estimator === 'empg' && (adv.empg.k !== 1 || adv.empg.kf !== 1 || adv.empg.zeta !== 0.05)) {
    refuse(
      'algorithm.advantage.empg',
      `k ${adv.empg.k}, kf ${adv.empg.kf}, ζ ${adv.empg.zeta}`,
      "ARLArena's compute_EMPG_advantage runs with its defaults k 1, k_f 1, ζ 0.05 (no config key); set them back for a verl launch",
    );
  }

  // Dynamic filtering (dimension 4).
  const f = a.filter;
  const caveats: string[] = [...s.caveats(o.env, f.coldStartSteps, f.enabled)];
  set('algorithm.filter_groups.enable', b(f.enabled));
  if (f.enabled) {
    set('algorithm.filter_groups.max_num_gen_batches', f.maxRounds);
    if (s.coldStart) set(s.coldStart.key, f.coldStartSteps);
    else if (f.coldStartSteps > 0)
      caveats.push(
        `${s.label} has no filtering cold start: filtering runs from the first step instead of after ${f.coldStartSteps} (--stack ${other} has algorithm.filter_groups.cold_start_steps)`,
      );
  }

  // KL to the reference (the starting Hugging Face model).
  const kl = a.kl;
  if (kl.enabled && !kl.inReward) {
    set('actor_rollout_ref.actor.use_kl_loss', 'True');
    // ARLArena's actor only logs the KL loss unless kl_loss_update is on (verl/workers/actor/dp_actor.py).
    if (s.klLossUpdate) set(s.klLossUpdate.key, 'True');
    set('actor_rollout_ref.actor.kl_loss_coef', kl.coef);
    set('actor_rollout_ref.actor.kl_loss_type', kl.type);
    set('algorithm.use_kl_in_reward', 'False');
  } else if (kl.enabled) {
    set('actor_rollout_ref.actor.use_kl_loss', 'False');
    set('algorithm.use_kl_in_reward', 'True');
    set('algorithm.kl_penalty', kl.type);
    set('algorithm.kl_ctrl.kl_coef', kl.coef);
  } else {
    set('actor_rollout_ref.actor.use_kl_loss', 'False');
    set('algorithm.use_kl_in_reward', 'False');
  }
  set('actor_rollout_ref.actor.entropy_coeff', a.entropyCoeff);
  set(s.invalidPenalty.use.key, b(a.invalidPenalty > 0));
  if (a.invalidPenalty > 0) set(s.invalidPenalty.coef.key, a.invalidPenalty);

  // Optimiser: one mini-batch is optim.miniBatchRows turn rows (actor_rollout_ref.rollout.n stays 1 in both
  // stacks, the group lives in env.rollout.n, so verl's prompt count is a row count here).
  set('actor_rollout_ref.actor.optim.lr', m.lr);
  set('actor_rollout_ref.actor.optim.weight_decay', m.weightDecay);
  set('actor_rollout_ref.actor.grad_clip', m.gradClip);
  set('actor_rollout_ref.actor.ppo_epochs', m.epochs);
  set('actor_rollout_ref.actor.ppo_mini_batch_size', m.miniBatchRows);
  set('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', gcd(infra.microBatchPerGpu, perGpu));
  set('actor_rollout_ref.actor.fsdp_config.param_offload', b(infra.actorOffload));
  set('actor_rollout_ref.actor.fsdp_config.optimizer_offload', b(infra.actorOffload));
  set('actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', infra.logProbMicroBatchPerGpu);
  set('actor_rollout_ref.ref.fsdp_config.param_offload', 'True');

  // Rollout (vLLM) and its sampling; validation samples at the lab's validation temperature.
  set('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', infra.logProbMicroBatchPerGpu);
  set('actor_rollout_ref.rollout.tensor_model_parallel_size', 1);
  set('actor_rollout_ref.rollout.gpu_memory_utilization', infra.gpuMemoryUtilization);
  set('actor_rollout_ref.rollout.enable_chunked_prefill', 'False');
  set('actor_rollout_ref.rollout.enforce_eager', b(infra.enforceEager));
  set('actor_rollout_ref.rollout.free_cache_engine', b(infra.freeCacheEngine));
  set('actor_rollout_ref.rollout.temperature', c.rollout.temperature);
  set('actor_rollout_ref.rollout.top_p', c.rollout.topP);
  set('actor_rollout_ref.rollout.top_k', c.rollout.topK > 0 ? c.rollout.topK : -1);
  set('actor_rollout_ref.rollout.val_kwargs.do_sample', b(c.training.valTemperature > 0));
  set('actor_rollout_ref.rollout.val_kwargs.temperature', c.training.valTemperature);
  if (infra.valTopP !== undefined) set('actor_rollout_ref.rollout.val_kwargs.top_p', infra.valTopP);
  if (infra.valTopK !== undefined) set('actor_rollout_ref.rollout.val_kwargs.top_k', infra.valTopK);

  // Environment: the group size is env.rollout.n in both stacks.
  set('env.env_name', ENV_NAME[o.env]);
  set('env.seed', c.seed);
  set('env.max_steps', c.env.maxSteps);
  set('env.history_length', c.env.historyWindow);
  set('env.rollout.n', c.rollout.groupSize);
  set('env.resources_per_worker.num_cpus', infra.envWorkerCpus);
  if (o.env === 'sokoban') {
    const st = c.env.settings;
    set('env.sokoban.dim_room', `[${Number(st.size)},${Number(st.size)}]`);
    set('env.sokoban.num_boxes', Number(st.boxes));
    set('env.sokoban.search_depth', Number(st.searchDepth));
    // The text grid (rgb_array is the vision variant).
    set('env.sokoban.mode', 'tiny_rgb_array');
  }

  // Trainer: the console logger is the one the lab follows (neither stack's tracker has a file backend).
  set('trainer.logger', '[console]');
  set('trainer.project_name', 'arlarena');
  set('trainer.experiment_name', o.experiment ?? `${c.preset}_${o.env}_${o.model.split('/').pop()}`);
  set('trainer.n_gpus_per_node', o.gpus);
  set('trainer.nnodes', 1);
  set('trainer.critic_warmup', 0);
  set('trainer.total_epochs', c.training.steps);
  set('trainer.test_freq', c.training.validateEvery > 0 ? c.training.validateEvery : -1);
  set('trainer.val_before_train', b(c.training.validateBeforeTraining));
  set('trainer.save_freq', c.training.checkpointEvery > 0 ? c.training.checkpointEvery : -1);

  const noEquivalent = [
    'model.* (verl loads --model; the paper starts from the behaviour-cloned UCLA-SCAI/Qwen3-4B-rft-alfworld / -webshop)',
    'compute.* (tfjs / onnxruntime engines; verl uses FSDP and vLLM)',
    'warmStart.* (the Hugging Face checkpoint is the starting policy and π_ref)',
    'training.sampleTrajectories',
    o.env === 'sokoban'
      ? 'env.settings other than size, boxes, searchDepth'
      : "env.settings (the real environment replaces the lab's stand-in)",
  ];
  const entry = s.entry[o.env];
  const prepare = `python3 -m examples.data_preprocess.prepare --mode text --train_data_size ${c.rollout.tasksPerStep} --val_data_size ${c.training.valEpisodes}`;
  const command = `${prepare} && \\\npython3 -m ${entry.module} \\\n${ov.map((x) => `  ${q(x)}`).join(' \\\n')}`;
  return { stack: s, entry, overrides: ov, prepare, command, caveats, noEquivalent };
}

/** env.env_name in both stacks (their env_manager.make_envs). */
const ENV_NAME: Record<VerlEnv, string> = { alfworld: 'alfworld/AlfredTWEnv', webshop: 'Webshop', sokoban: 'Sokoban' };
