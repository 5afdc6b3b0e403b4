import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildVerlLaunch, verlLabConfig, VerlMappingError } from './launch';
import { PAPER_SCALE } from './paperScale';
import { VERL_STACKS, verlStack } from './stacks/index';
import type { VerlEnv, VerlStackName } from './types';

function launch(
  stack: VerlStackName,
  env: VerlEnv,
  o: { preset?: string; sets?: Record<string, string | number | boolean>; laptop?: boolean; gpus?: number } = {},
) {
  const { config, issues } = verlLabConfig(o.preset ?? 'sampo', env, o.sets ?? {}, o.laptop ?? false);
  if (!config) throw new Error(issues.map((i) => i.message).join('; '));
  return buildVerlLaunch(config, PAPER_SCALE[env].infra, {
    stack: VERL_STACKS[stack],
    env,
    model: 'UCLA-SCAI/Qwen3-4B-rft-alfworld',
    gpus: o.gpus ?? 4,
  });
}

/** key → value as written (a `++` prefix stays on the key, so where a key is force-added is asserted too). */
function keys(l: { overrides: readonly string[] }): Record<string, string> {
  const m: Record<string, string> = {};
  for (const x of l.overrides) {
    const i = x.indexOf('=');
    expect(m[x.slice(0, i)], `${x.slice(0, i)} set twice`).toBeUndefined();
    m[x.slice(0, i)] = x.slice(i + 1);
  }
  return m;
}

// What ARLArena's own ALFWorld launches pass (examples/embody_agent_trainer/train_alfworld_gigpo.sh, the DAPO
// script's filtering with its 15-step cold start, SAMPO's GSPO clip 3e-3/4e-3 and seq-mean-token-mean), plus the
// lab's own choices: console logger, the lab seed, validation before training, the entropy and clip_ratio_c
// values of the config.
const ALFWORLD_ARLARENA: Record<string, string> = {
  'data.train_files': '$HOME/data/text/train.parquet',
  'data.val_files': '$HOME/data/text/test.parquet',
  'data.train_batch_size': '16',
  'data.val_batch_size': '128',
  'data.max_prompt_length': '2048',
  'data.max_response_length': '512',
  'data.filter_overlong_prompts': 'True',
  'data.truncation': 'error',
  'data.return_raw_chat': 'True',
  'actor_rollout_ref.model.path': 'UCLA-SCAI/Qwen3-4B-rft-alfworld',
  'actor_rollout_ref.model.use_remove_padding': 'True',
  'actor_rollout_ref.model.enable_gradient_checkpointing': 'True',
  'actor_rollout_ref.actor.loss_agg_mode': 'seq-mean-token-mean',
  'actor_rollout_ref.actor.policy_loss.loss_mode': 'gspo',
  'actor_rollout_ref.actor.clip_ratio_low': '0.003',
  'actor_rollout_ref.actor.clip_ratio_high': '0.004',
  'actor_rollout_ref.actor.clip_ratio_c': '3',
  'actor_rollout_ref.actor.use_seq_mask': 'False',
  'algorithm.adv_estimator': 'gigpo',
  'algorithm.gamma': '0.95',
  'algorithm.gigpo.step_advantage_w': '1',
  'algorithm.gigpo.mode': 'mean_std_norm',
  'algorithm.filter_groups.enable': 'True',
  'algorithm.filter_groups.max_num_gen_batches': '3',
  'algorithm.filter_groups.cold_start_steps': '15',
  'actor_rollout_ref.actor.use_kl_loss': 'True',
  'actor_rollout_ref.actor.kl_loss_update': 'True',
  'actor_rollout_ref.actor.kl_loss_coef': '0.01',
  'actor_rollout_ref.actor.kl_loss_type': 'low_var_kl',
  'algorithm.use_kl_in_reward': 'False',
  'actor_rollout_ref.actor.entropy_coeff': '0.001',
  use_invalid_action_penalty: 'True',
  invalid_action_penalty_coef: '0.1',
  'actor_rollout_ref.actor.optim.lr': '0.000001',
  'actor_rollout_ref.actor.optim.weight_decay': '0.01',
  'actor_rollout_ref.actor.grad_clip': '1',
  'actor_rollout_ref.actor.ppo_epochs': '1',
  'actor_rollout_ref.actor.ppo_mini_batch_size': '256',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': '32',
  'actor_rollout_ref.actor.fsdp_config.param_offload': 'False',
  'actor_rollout_ref.actor.fsdp_config.optimizer_offload': 'False',
  'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu': '32',
  'actor_rollout_ref.ref.fsdp_config.param_offload': 'True',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': '32',
  'actor_rollout_ref.rollout.tensor_model_parallel_size': '1',
  'actor_rollout_ref.rollout.gpu_memory_utilization': '0.4',
  'actor_rollout_ref.rollout.enable_chunked_prefill': 'False',
  'actor_rollout_ref.rollout.enforce_eager': 'False',
  'actor_rollout_ref.rollout.free_cache_engine': 'False',
  'actor_rollout_ref.rollout.temperature': '1',
  'actor_rollout_ref.rollout.top_p': '1',
  'actor_rollout_ref.rollout.top_k': '-1',
  'actor_rollout_ref.rollout.val_kwargs.do_sample': 'True',
  'actor_rollout_ref.rollout.val_kwargs.temperature': '0.6',
  'actor_rollout_ref.rollout.val_kwargs.top_p': '0.95',
  'actor_rollout_ref.rollout.val_kwargs.top_k': '20',
  'env.env_name': 'alfworld/AlfredTWEnv',
  'env.seed': '1',
  'env.max_steps': '50',
  'env.history_length': '2',
  'env.rollout.n': '8',
  'env.resources_per_worker.num_cpus': '0.2',
  'trainer.logger': '[console]',
  'trainer.project_name': 'arlarena',
  'trainer.experiment_name': 'sampo_alfworld_Qwen3-4B-rft-alfworld',
  'trainer.n_gpus_per_node': '4',
  'trainer.nnodes': '1',
  'trainer.critic_warmup': '0',
  'trainer.total_epochs': '200',
  'trainer.test_freq': '5',
  'trainer.val_before_train': 'True',
  'trainer.save_freq': '10',
};

// WebShop (examples/shop_agent_trainer/Qwen3_4B/train_gigpo.sh; SAMPO's 5-step cold start and 250 steps).
const WEBSHOP_ARLARENA: Record<string, string> = {
  ...ALFWORLD_ARLARENA,
  'data.val_batch_size': '128',
  'data.max_prompt_length': '4096',
  'algorithm.gigpo.mode': 'mean_norm',
  'algorithm.filter_groups.cold_start_steps': '5',
  'actor_rollout_ref.actor.ppo_mini_batch_size': '128',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': '8',
  'actor_rollout_ref.actor.fsdp_config.param_offload': 'True',
  'actor_rollout_ref.actor.fsdp_config.optimizer_offload': 'True',
  'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu': '8',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': '8',
  'actor_rollout_ref.rollout.gpu_memory_utilization': '0.5',
  'actor_rollout_ref.rollout.enforce_eager': 'True',
  'env.env_name': 'Webshop',
  'env.max_steps': '15',
  'env.resources_per_worker.num_cpus': '0.1',
  'trainer.experiment_name': 'sampo_webshop_Qwen3-4B-rft-alfworld',
  'trainer.total_epochs': '250',
  'trainer.test_freq': '10',
};
delete WEBSHOP_ARLARENA['actor_rollout_ref.rollout.val_kwargs.top_p'];
delete WEBSHOP_ARLARENA['actor_rollout_ref.rollout.val_kwargs.top_k'];

// Sokoban (examples/game_agent_trainer/train_gigpo_ablation.sh's batch, lengths, horizon; game_.yaml lacks
// kl_loss_update and cold_start_steps, so they are force-added).
const SOKOBAN_ARLARENA: Record<string, string> = {
  ...WEBSHOP_ARLARENA,
  'data.train_batch_size': '32',
  'data.max_prompt_length': '1024',
  'data.max_response_length': '500',
  'algorithm.gigpo.mode': 'mean_std_norm',
  'actor_rollout_ref.actor.ppo_mini_batch_size': '64',
  'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu': '16',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': '16',
  'actor_rollout_ref.rollout.free_cache_engine': 'True',
  'actor_rollout_ref.rollout.val_kwargs.temperature': '0.4',
  'env.env_name': 'Sokoban',
  'env.sokoban.dim_room': '[6,6]',
  'env.sokoban.num_boxes': '1',
  'env.sokoban.search_depth': '30',
  'env.sokoban.mode': 'tiny_rgb_array',
  'trainer.experiment_name': 'sampo_sokoban_Qwen3-4B-rft-alfworld',
  'trainer.total_epochs': '150',
  'trainer.test_freq': '5',
  'trainer.save_freq': '-1',
  '++algorithm.filter_groups.cold_start_steps': '0',
  '++actor_rollout_ref.actor.kl_loss_update': 'True',
};
delete SOKOBAN_ARLARENA['algorithm.filter_groups.cold_start_steps'];
delete SOKOBAN_ARLARENA['actor_rollout_ref.actor.kl_loss_update'];

/** verl-agent: the penalty under the actor, its own data folder, and no seq-mask / kl_loss_update / cold start keys. */
function asVerlAgent(m: Record<string, string>): Record<string, string> {
  const r: Record<string, string> = {
    ...m,
    'data.train_files': '$HOME/data/verl-agent/text/train.parquet',
    'data.val_files': '$HOME/data/verl-agent/text/test.parquet',
  };
  for (const k of Object.keys(r)) if (/use_seq_mask|kl_loss_update|cold_start_steps|^use_invalid|^invalid_action/.test(k)) delete r[k];
  r['actor_rollout_ref.actor.use_invalid_action_penalty'] = 'True';
  r['actor_rollout_ref.actor.invalid_action_penalty_coef'] = '0.1';
  return r;
}

describe('remote verl: SAMPO at paper scale, key for key, per stack', () => {
  it('ARLArena: the entry point and config of each env, and exactly the keys of its scripts', () => {
    const cases: [VerlEnv, string, string, Record<string, string>][] = [
      ['alfworld', 'recipe.world_agent.main_world_agent', 'alfworld_', ALFWORLD_ARLARENA],
      ['webshop', 'recipe.shop_agent.main_shop_agent', 'webshop_', WEBSHOP_ARLARENA],
      ['sokoban', 'recipe.game_agent.main_game_agent', 'game_', SOKOBAN_ARLARENA],
    ];
    for (const [env, module, configName, expected] of cases) {
      const l = launch('arlarena', env);
      expect(l.entry.module).toBe(module);
      expect(l.entry.configName).toBe(configName);
      expect(l.command).toContain(`python3 -m ${module} \\\n`);
      expect(keys(l), env).toEqual(expected);
    }
  });

  it('verl-agent: main_ppo for every env, the penalty under the actor, the keys ARLArena adds left out', () => {
    for (const [env, expected] of [
      ['alfworld', ALFWORLD_ARLARENA],
      ['webshop', WEBSHOP_ARLARENA],
      ['sokoban', SOKOBAN_ARLARENA],
    ] as const) {
      const l = launch('verl-agent', env);
      expect(l.entry).toMatchObject({ module: 'verl.trainer.main_ppo', configName: 'ppo_trainer' });
      expect(keys(l), env).toEqual(asVerlAgent(expected));
    }
    expect(launch('verl-agent', 'alfworld').caveats.join('\n')).toMatch(/no filtering cold start.*after 15/);
  });

  it('the data preparation writes B training prompts and the validation set (WebShop: 2 × 128)', () => {
    expect(launch('arlarena', 'alfworld').prepare).toBe(
      'python3 -m examples.data_preprocess.prepare --mode text --train_data_size 16 --val_data_size 128',
    );
    expect(launch('arlarena', 'webshop').prepare).toContain('--train_data_size 16 --val_data_size 256');
  });

  it("ARLArena's shop trainer never leaves a cold start: the launch says so", () => {
    expect(launch('arlarena', 'webshop').caveats.join('\n')).toMatch(
      /shop_agent\/ppo\/ray_trainer\.py does not pass the training step.*cold_start_steps=5/,
    );
    expect(launch('arlarena', 'alfworld').caveats).toEqual([]);
    expect(launch('arlarena', 'webshop', { sets: { 'algorithm.filter.coldStartSteps': 0 } }).caveats).toEqual([]);
  });

  it("--laptop keeps the preset's values; --set wins over the paper's", () => {
    const lap = keys(launch('arlarena', 'alfworld', { laptop: true }));
    expect(lap).toMatchObject({
      'data.train_batch_size': '4',
      'env.rollout.n': '4',
      'data.max_response_length': '32',
      'actor_rollout_ref.actor.optim.lr': '0.0001',
      'actor_rollout_ref.actor.ppo_mini_batch_size': '64',
      'algorithm.filter_groups.cold_start_steps': '3',
      'trainer.total_epochs': '40',
    });
    // 64 rows over 4 GPUs: 16 per GPU, so the micro-batch drops from 32 to 16.
    expect(lap['actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu']).toBe('16');
    const set = keys(launch('arlarena', 'alfworld', { sets: { 'rollout.groupSize': 4, 'optim.lr': 3e-6 } }));
    expect(set).toMatchObject({ 'env.rollout.n': '4', 'actor_rollout_ref.actor.optim.lr': '0.000003', 'data.train_batch_size': '16' });
  });
});

describe('remote verl: every preset knob at the key its stack has, or a refusal that names the stack that has it', () => {
  it('SAPO, GRPO_SM, CISPO and EMPG on ARLArena use its own keys', () => {
    expect(keys(launch('arlarena', 'alfworld', { preset: 'sapo' }))).toMatchObject({
      'actor_rollout_ref.actor.policy_loss.loss_mode': 'sapo',
      'actor_rollout_ref.actor.tau_pos': '1',
      'actor_rollout_ref.actor.tau_neg': '1.05',
      'algorithm.adv_estimator': 'grpo',
      'algorithm.norm_adv_by_std_in_grpo': 'True',
    });
    expect(keys(launch('arlarena', 'alfworld', { preset: 'grpo_sm' }))).toMatchObject({
      'actor_rollout_ref.actor.use_seq_mask': 'True',
      'actor_rollout_ref.actor.seq_mask_delta': '0.003',
      'actor_rollout_ref.actor.policy_loss.loss_mode': 'vanilla',
    });
    expect(keys(launch('arlarena', 'webshop', { preset: 'cispo' }))).toMatchObject({
      'actor_rollout_ref.actor.policy_loss.loss_mode': 'cispo',
      'actor_rollout_ref.actor.clip_ratio_low': '1',
      'actor_rollout_ref.actor.clip_ratio_high': '0.2',
    });
    expect(keys(launch('arlarena', 'sokoban', { preset: 'empg' }))['algorithm.adv_estimator']).toBe('empg');
    const dapo = keys(launch('arlarena', 'alfworld', { preset: 'dapo_grpo' }));
    expect(dapo).toMatchObject({
      'algorithm.adv_estimator': 'grpo',
      'algorithm.filter_groups.enable': 'True',
      'algorithm.filter_groups.cold_start_steps': '15',
    });
    expect(dapo['algorithm.gigpo.mode']).toBeUndefined();
  });

  it("Dr. GRPO is grpo without the std division; grpo_traj is ARLArena's vanilla_grpo", () => {
    expect(keys(launch('verl-agent', 'webshop', { preset: 'grpo', sets: { 'algorithm.advantage.estimator': 'drgrpo' } }))).toMatchObject({
      'algorithm.adv_estimator': 'grpo',
      'algorithm.norm_adv_by_std_in_grpo': 'False',
    });
    expect(
      keys(launch('arlarena', 'webshop', { preset: 'grpo', sets: { 'algorithm.advantage.estimator': 'grpo_traj' } }))[
        'algorithm.adv_estimator'
      ],
    ).toBe('vanilla_grpo');
  });

  it('verl-agent refuses what it lacks, naming the field, the value and --stack arlarena', () => {
    expect(() => launch('verl-agent', 'alfworld', { preset: 'sapo' })).toThrow(
      /^algorithm\.policyLoss\.mode = sapo: verl-agent has no sapo loss \(policy_loss\.loss_mode takes vanilla, gspo\); use --stack arlarena$/,
    );
    expect(() => launch('verl-agent', 'alfworld', { preset: 'grpo_sm' })).toThrow(
      /seqMask\.enabled = true: verl-agent has no sequence masking; use --stack arlarena/,
    );
    expect(() => launch('verl-agent', 'alfworld', { preset: 'empg' })).toThrow(VerlMappingError);
    expect(() => launch('verl-agent', 'alfworld', { preset: 'grpo', sets: { 'algorithm.advantage.estimator': 'grpo_traj' } })).toThrow(
      /estimator = grpo_traj: verl-agent has no such estimator/,
    );
  });

  it('knobs no stack has a key for are refused instead of dropped', () => {
    expect(() => launch('arlarena', 'alfworld', { preset: 'empg', sets: { 'algorithm.advantage.empg.zeta': 0.1 } })).toThrow(
      /compute_EMPG_advantage runs with its defaults/,
    );
    expect(() => launch('arlarena', 'alfworld', { sets: { 'algorithm.overlong.enabled': true } })).toThrow(/overlong\.enabled = true/);
    expect(() => launch('arlarena', 'alfworld', { sets: { 'optim.beta2': 0.99 } })).toThrow(/optim\.beta1\/beta2\/eps = 0\.9\/0\.99\/1e-8/);
    expect(() => launch('arlarena', 'alfworld', { gpus: 3 })).toThrow(
      /optim\.miniBatchRows = 256: .*multiple of 3; --set optim\.miniBatchRows=255/,
    );
  });

  it('the catalog: two stacks, arlarena first; an unknown one names the known', () => {
    expect(Object.keys(VERL_STACKS)).toEqual(['arlarena', 'verl-agent']);
    expect(() => verlStack('verl')).toThrow(/unknown verl stack "verl"; known stacks: arlarena, verl-agent \(default arlarena\)/);
  });
});

describe('docs/guides/verl.md names every key a launch sets', () => {
  it('each key of each preset × env × stack launch appears in the mapping tables', () => {
    const doc = readFileSync(new URL('../../../../docs/guides/verl.md', import.meta.url), 'utf8');
    const named = new Set([...doc.replace(/```[\s\S]*?```/g, '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
    const missing = new Set<string>();
    for (const stack of ['arlarena', 'verl-agent'] as const) {
      for (const env of ['alfworld', 'webshop', 'sokoban'] as const) {
        for (const preset of ['sampo', 'grpo', 'grpo_sm', 'sapo', 'cispo', 'gspo', 'gigpo', 'empg', 'dapo_grpo', 'dapo_gigpo']) {
          let l;
          try {
            l = launch(stack, env, { preset });
          } catch (e) {
            if (e instanceof VerlMappingError) continue;
            throw e;
          }
          for (const o of l.overrides) {
            const key = o.slice(0, o.indexOf('=')).replace(/^\+\+/, '');
            if (!named.has(key)) missing.add(key);
          }
        }
      }
    }
    expect([...missing]).toEqual([]);
  });
});
