import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { resolveConfig } from '../../core/config/index';
import type { CliContext } from '../cli/types';
import { UsageError } from '../cli/types';
import { buildVerlLaunch } from './verl';
import { runVerl } from '../cli/commands/remoteVerl';

function cfg(preset: string, env: string, o: Record<string, string | number | boolean> = {}) {
  const { config, issues } = resolveConfig(preset, env, o);
  if (!config) throw new Error(issues.map((i) => i.message).join('; '));
  return config;
}

function overridesOf(preset: string, env: 'alfworld' | 'webshop' | 'sokoban', o: Record<string, string | number | boolean> = {}) {
  const labEnv = { alfworld: 'household', webshop: 'shop', sokoban: 'sokoban' }[env];
  const l = buildVerlLaunch(cfg(preset, labEnv, o), { env, model: 'Qwen/Qwen2.5-1.5B-Instruct', gpus: 2 });
  return { ...l, map: new Map(l.overrides.map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)])) };
}

describe('verl hand-off: a lab preset as main_ppo Hydra overrides', () => {
  it('SAMPO on ALFWorld: GSPO sequence clip, seq-mean-token-mean, GiGPO with its parameters, DAPO filtering, k3 KL loss, invalid-action penalty', () => {
    const { map, forkOnly, overrides } = overridesOf('sampo', 'alfworld', { 'rollout.tasksPerStep': 16, 'rollout.groupSize': 8, 'optim.lr': 1e-6 });
    expect(new Set(overrides.map((x) => x.split('=')[0])).size).toBe(overrides.length);
    expect(Object.fromEntries(map)).toMatchObject({
      'actor_rollout_ref.actor.policy_loss.loss_mode': 'gspo',
      'actor_rollout_ref.actor.loss_agg_mode': 'seq-mean-token-mean',
      'actor_rollout_ref.actor.clip_ratio_low': '0.003',
      'actor_rollout_ref.actor.clip_ratio_high': '0.004',
      'algorithm.adv_estimator': 'gigpo',
      'algorithm.gamma': '0.95',
      'algorithm.gigpo.step_advantage_w': '1',
      'algorithm.filter_groups.enable': 'True',
      'algorithm.filter_groups.max_num_gen_batches': '3',
      'actor_rollout_ref.actor.use_kl_loss': 'True',
      'actor_rollout_ref.actor.kl_loss_type': 'low_var_kl',
      'actor_rollout_ref.actor.kl_loss_coef': '0.01',
      'actor_rollout_ref.actor.use_invalid_action_penalty': 'True',
      'actor_rollout_ref.actor.invalid_action_penalty_coef': '0.1',
      'data.train_batch_size': '16',
      'env.rollout.n': '8',
      'actor_rollout_ref.actor.optim.lr': '0.000001',
      'env.env_name': 'alfworld/AlfredTWEnv',
      'trainer.logger': '[console,file]',
      'actor_rollout_ref.model.path': 'Qwen/Qwen2.5-1.5B-Instruct',
      'trainer.n_gpus_per_node': '2',
    });
    expect(forkOnly.join('\n')).toMatch(/cold_start_steps/);
    expect(forkOnly.join('\n')).toMatch(/kl_loss_update/);
  });

  it('GRPO_SM names sequence masking as fork-only; Dr. GRPO drops the std division; EMPG has no verl estimator', () => {
    expect(overridesOf('grpo_sm', 'webshop').forkOnly.join('\n')).toMatch(/use_seq_mask/);
    expect(overridesOf('grpo', 'webshop', { 'algorithm.advantage.estimator': 'drgrpo' }).map.get('algorithm.norm_adv_by_std_in_grpo')).toBe('False');
    const empg = overridesOf('grpo', 'sokoban', { 'algorithm.advantage.estimator': 'empg' });
    expect(empg.map.has('algorithm.adv_estimator')).toBe(false);
    expect(empg.forkOnly.join('\n')).toMatch(/empg/);
    expect(empg.map.get('env.sokoban.dim_room')).toBe('[6,6]');
  });

  it('remote verl --print prints the command; bad --env and missing --model are usage errors', async () => {
    let out = '';
    const ctx: CliContext = { dataDir: '/nonexistent', stdout: new Writable({ write: (c, _e, cb) => ((out += String(c)), cb()) }), stderr: new Writable({ write: (_c, _e, cb) => cb() }), isTTY: false };
    expect(await runVerl(['--preset', 'sampo', '--env', 'webshop', '--model', 'Qwen/Qwen3-4B', '--print'], ctx)).toBe(0);
    expect(out).toContain('python3 -m verl.trainer.main_ppo \\\n');
    expect(out).toContain('env.env_name=Webshop');
    expect(out).toContain("'trainer.logger=[console,file]'");
    await expect(runVerl(['--env', 'minecraft', '--model', 'x'], ctx)).rejects.toThrow(UsageError);
    await expect(runVerl(['--env', 'sokoban'], ctx)).rejects.toThrow(/--model HF_ID is needed/);
  });
});
