import { describe, expect, it } from 'vitest';
import { testCliContext } from '../../testing/testContext';
import { UsageError } from '../types';
import { runVerl } from './remoteVerl';

async function verl(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = testCliContext('/nonexistent');
  const code = await runVerl(args, c.ctx);
  return { code, out: c.out(), err: c.err() };
}

/** The overrides of a printed launch (the lines after the entry point), as key → value. */
function printedKeys(out: string): Record<string, string> {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => l.startsWith('python3 -m ') && !l.includes('data_preprocess'));
  const m: Record<string, string> = {};
  for (const l of lines.slice(at + 1)) {
    const t = l
      .trim()
      .replace(/ \\$/, '')
      .replace(/^'(.*)'$/, '$1');
    if (!t || t.startsWith('#')) continue;
    m[t.slice(0, t.indexOf('='))] = t.slice(t.indexOf('=') + 1);
  }
  return m;
}

describe('arlarena remote verl --print', () => {
  it('SAMPO × ALFWorld / WebShop / Sokoban on ARLArena: its entry point, config and the paper-scale keys', async () => {
    const cases = [
      [
        'alfworld',
        'recipe.world_agent.main_world_agent',
        'recipe/world_agent/config/alfworld_.yaml',
        {
          'algorithm.gigpo.mode': 'mean_std_norm',
          'algorithm.filter_groups.cold_start_steps': '15',
          'actor_rollout_ref.actor.ppo_mini_batch_size': '256',
          'env.max_steps': '50',
          'trainer.total_epochs': '200',
        },
      ],
      [
        'webshop',
        'recipe.shop_agent.main_shop_agent',
        'recipe/shop_agent/config/webshop_.yaml',
        {
          'algorithm.gigpo.mode': 'mean_norm',
          'algorithm.filter_groups.cold_start_steps': '5',
          'actor_rollout_ref.actor.ppo_mini_batch_size': '128',
          'env.max_steps': '15',
          'trainer.total_epochs': '250',
        },
      ],
      [
        'sokoban',
        'recipe.game_agent.main_game_agent',
        'recipe/game_agent/config/game_.yaml',
        {
          '++actor_rollout_ref.actor.kl_loss_update': 'True',
          '++algorithm.filter_groups.cold_start_steps': '0',
          'env.sokoban.dim_room': '[6,6]',
          'trainer.total_epochs': '150',
        },
      ],
    ] as const;
    for (const [env, module, config, expected] of cases) {
      const r = await verl(['--preset', 'sampo', '--env', env, '--model', 'Qwen/Qwen3-4B', '--gpus', '4', '--print']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(
        `# sampo on ${env} for ARLArena (the paper's code), WillDreamer/ARLArena@dc1da9f: run from the root of its checkout (config ${config})`,
      );
      expect(r.out).toContain(`\npython3 -m ${module} \\\n`);
      const k = printedKeys(r.out);
      expect(k).toMatchObject({
        ...expected,
        use_invalid_action_penalty: 'True',
        invalid_action_penalty_coef: '0.1',
        'actor_rollout_ref.actor.policy_loss.loss_mode': 'gspo',
        'algorithm.adv_estimator': 'gigpo',
        'actor_rollout_ref.actor.optim.lr': '0.000001',
        'trainer.logger': '[console]',
        'actor_rollout_ref.model.path': 'Qwen/Qwen3-4B',
        'trainer.n_gpus_per_node': '4',
      });
      expect(Object.keys(k).some((x) => x.includes('invalid_action') && x.startsWith('actor_rollout_ref'))).toBe(false);
    }
  });

  it("--stack verl-agent prints main_ppo; --laptop keeps the preset's batch; --json carries the same overrides", async () => {
    const r = await verl(['--stack', 'verl-agent', '--env', 'webshop', '--model', 'Qwen/Qwen3-4B', '--laptop']);
    expect(r.out).toContain('\npython3 -m verl.trainer.main_ppo \\\n');
    expect(r.out).toContain('# note: verl-agent has no filtering cold start');
    expect(r.out).toContain("# scale: the preset's laptop values (--laptop): batch 4 × group 4");
    expect(printedKeys(r.out)).toMatchObject({
      'actor_rollout_ref.actor.use_invalid_action_penalty': 'True',
      'data.train_batch_size': '4',
      'env.rollout.n': '4',
    });
    const j = await verl(['--stack', 'verl-agent', '--env', 'webshop', '--model', 'Qwen/Qwen3-4B', '--laptop', '--json']);
    const parsed = JSON.parse(j.out) as { stack: string; overrides: string[]; entry: { module: string } };
    expect(parsed.stack).toBe('verl-agent');
    expect(parsed.entry.module).toBe('verl.trainer.main_ppo');
    expect(
      Object.fromEntries(parsed.overrides.map((o) => [o.slice(0, o.indexOf('=')), o.slice(o.indexOf('=') + 1).replace(/^'|'$/g, '')])),
    ).toEqual(printedKeys(r.out));
  });

  it('bad usage is one line naming the fix', async () => {
    await expect(verl(['--env', 'minecraft', '--model', 'x'])).rejects.toThrow(UsageError);
    await expect(verl(['--env', 'sokoban'])).rejects.toThrow(/--model HF_ID is needed/);
    await expect(verl(['--env', 'sokoban', '--model', 'x', '--stack', 'verl'])).rejects.toThrow(
      /--stack verl: one of arlarena, verl-agent/,
    );
    await expect(verl(['--env', 'sokoban', '--model', 'x', '--stack', 'verl-agent', '--preset', 'cispo'])).rejects.toThrow(
      /algorithm\.policyLoss\.mode = cispo: verl-agent has no cispo loss .*use --stack arlarena/,
    );
    await expect(verl(['--env', 'sokoban', '--model', 'x', '--check'])).rejects.toThrow(/--check needs --workdir PATH/);
    await expect(verl(['--env', 'sokoban', '--model', 'x', '--on', 'lab'])).rejects.toThrow(
      /--on needs --workdir DIR: the root of the stack's checkout on the cluster/,
    );
  });
});
