/**
 * `remote verl --check` against real Hydra (the pinned .venvs/hydra: hydra-core 1.3.2, omegaconf 2.3.0) and two
 * real configurations: PyPI verl 0.5.0's packaged trainer config (installed without its dependencies), and the
 * tests' own small tree in ARLArena's layout (tests/fixtures/verl/arlarena-layout). No verl code runs.
 */
import { execFileSync } from 'node:child_process';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { venvPython } from '../../../../tests/support/peers';
import { checkHydraOverrides, describeHydraReport, hydraReportClean, type HydraCheckReport } from './hydraCheck';
import { buildVerlLaunch, verlLabConfig } from './launch';
import { PAPER_SCALE } from './paperScale';
import { VERL_STACKS } from './stacks/index';
import type { VerlEnv, VerlStackName } from './types';

const PY = venvPython('hydra');
const FIXTURE = 'tests/fixtures/verl/arlarena-layout';
/** site-packages of the venv, found without importing verl (its __init__ wants torch). */
const SITE = execFileSync(
  PY,
  ['-c', 'import importlib.util, os; print(os.path.dirname(os.path.dirname(importlib.util.find_spec("verl").origin)))'],
  { encoding: 'utf8' },
).trim();

function sampo(stack: VerlStackName, env: VerlEnv) {
  const { config } = verlLabConfig('sampo', env, {}, false);
  return buildVerlLaunch(config!, PAPER_SCALE[env].infra, { stack: VERL_STACKS[stack], env, model: 'Qwen/Qwen3-4B', gpus: 4 });
}
const unknownKeys = (r: HydraCheckReport) => r.unknown.map((u) => u.key).sort();

describe("remote verl --check: the launch composed against a checkout's Hydra config", () => {
  it('ARLArena layout: the SAMPO launch of each env composes key for key (game_ gets its two added keys with ++)', async () => {
    for (const env of ['alfworld', 'webshop', 'sokoban'] as const) {
      const l = sampo('arlarena', env);
      const r = await checkHydraOverrides({
        python: PY,
        workdir: FIXTURE,
        configDir: l.entry.configDir,
        configName: l.entry.configName,
        overrides: l.overrides,
      });
      expect(describeHydraReport(r), env).toEqual([]);
      expect(hydraReportClean(r)).toBe(true);
    }
  }, 60_000);

  it('--python given relative to where the command runs (as a user types it) is found, though the check runs in --workdir', async () => {
    // `--python .venvs/hydra/bin/python --workdir ~/ARLArena` was spawned with cwd = the workdir, where that path
    // does not exist: "--python .venvs/hydra/bin/python: not found".
    const rel = relative(process.cwd(), PY);
    expect(rel.startsWith('/')).toBe(false);
    const l = sampo('arlarena', 'sokoban');
    const r = await checkHydraOverrides({
      python: rel,
      workdir: FIXTURE,
      configDir: l.entry.configDir,
      configName: l.entry.configName,
      overrides: l.overrides,
    });
    expect(describeHydraReport(r)).toEqual([]);
  }, 60_000);

  it('ARLArena layout: a verl-agent launch is refused at exactly its actor-level penalty keys; game_ refuses a plain kl_loss_update', async () => {
    const va = sampo('verl-agent', 'alfworld');
    const r = await checkHydraOverrides({
      python: PY,
      workdir: FIXTURE,
      configDir: 'recipe/world_agent/config',
      configName: 'alfworld_',
      overrides: va.overrides,
    });
    expect(unknownKeys(r)).toEqual([
      'actor_rollout_ref.actor.invalid_action_penalty_coef',
      'actor_rollout_ref.actor.use_invalid_action_penalty',
    ]);
    const plain = sampo('arlarena', 'sokoban').overrides.map((o) => o.replace(/^\+\+/, ''));
    const g = await checkHydraOverrides({
      python: PY,
      workdir: FIXTURE,
      configDir: 'recipe/game_agent/config',
      configName: 'game_',
      overrides: plain,
    });
    expect(unknownKeys(g)).toEqual(['actor_rollout_ref.actor.kl_loss_update', 'algorithm.filter_groups.cold_start_steps']);
  }, 60_000);

  it('catches a wrong key (with the near one), wrong types, a + on an existing key, a bad override and an unset required field', async () => {
    const r = await checkHydraOverrides({
      python: PY,
      workdir: FIXTURE,
      configDir: 'recipe/world_agent/config',
      configName: 'alfworld_required',
      overrides: [
        'actor_rollout_ref.actor.clip_ratio_lwo=0.1',
        'data.train_batch_size=abc',
        'actor_rollout_ref.actor.use_kl_loss=1',
        'algorithm.kl_ctrl=3',
        '+use_invalid_action_penalty=True',
        'env.seed=1,2',
        'trainer.logger=[console]',
        'actor_rollout_ref.actor.optim.lr=1e-6',
      ],
    });
    expect(r.unknown).toEqual([
      {
        override: 'actor_rollout_ref.actor.clip_ratio_lwo=0.1',
        key: 'actor_rollout_ref.actor.clip_ratio_lwo',
        suggestion: 'actor_rollout_ref.actor.clip_ratio_low',
      },
    ]);
    expect(r.typeErrors.map((t) => [t.key, t.expected])).toEqual([
      ['data.train_batch_size', 'number'],
      ['actor_rollout_ref.actor.use_kl_loss', 'bool'],
      ['algorithm.kl_ctrl', 'mapping'],
    ]);
    expect(r.exists).toEqual([{ override: '+use_invalid_action_penalty=True', key: 'use_invalid_action_penalty' }]);
    expect(r.invalid.map((i) => i.override)).toEqual(['env.seed=1,2']);
    expect(r.missing).toEqual(['env.alfworld.data_root']);
    expect(describeHydraReport(r)).toContain(
      'unknown key: actor_rollout_ref.actor.clip_ratio_lwo=0.1 — the config has no actor_rollout_ref.actor.clip_ratio_lwo (did you mean actor_rollout_ref.actor.clip_ratio_low?)',
    );
  }, 60_000);

  it("PyPI verl 0.5.0's packaged config: every upstream key of a verl-agent launch composes; verl-agent's own keys are reported unknown", async () => {
    const l = sampo('verl-agent', 'sokoban');
    const r = await checkHydraOverrides({
      python: PY,
      workdir: SITE,
      configDir: 'verl/trainer/config',
      configName: 'ppo_trainer',
      overrides: l.overrides,
    });
    expect(unknownKeys(r)).toEqual([
      'actor_rollout_ref.actor.invalid_action_penalty_coef',
      'actor_rollout_ref.actor.use_invalid_action_penalty',
      'algorithm.filter_groups.enable',
      'algorithm.filter_groups.max_num_gen_batches',
      'algorithm.gigpo.mode',
      'algorithm.gigpo.step_advantage_w',
      'env.env_name',
      'env.history_length',
      'env.max_steps',
      'env.resources_per_worker.num_cpus',
      'env.rollout.n',
      'env.seed',
      'env.sokoban.dim_room',
      'env.sokoban.mode',
      'env.sokoban.num_boxes',
      'env.sokoban.search_depth',
    ]);
    expect(r.typeErrors).toEqual([]);
    expect(r.missing).toEqual([]);
    expect(r.composeError).toBeNull();
    // ARLArena's additions on top of verl 0.5 are not upstream keys either.
    const a = await checkHydraOverrides({
      python: PY,
      workdir: SITE,
      configDir: 'verl/trainer/config',
      configName: 'ppo_trainer',
      overrides: sampo('arlarena', 'alfworld').overrides,
    });
    expect(unknownKeys(a)).toEqual(
      expect.arrayContaining([
        'actor_rollout_ref.actor.kl_loss_update',
        'actor_rollout_ref.actor.use_seq_mask',
        'algorithm.filter_groups.cold_start_steps',
        'invalid_action_penalty_coef',
        'use_invalid_action_penalty',
      ]),
    );
  }, 60_000);

  it('says what to fix when the checkout, its config or the Python is wrong', async () => {
    await expect(
      checkHydraOverrides({ python: PY, workdir: '/nonexistent/arlarena', configDir: 'x', configName: 'y', overrides: [] }),
    ).rejects.toThrow(/--workdir \/nonexistent\/arlarena: no such directory/);
    await expect(
      checkHydraOverrides({ python: PY, workdir: FIXTURE, configDir: 'recipe/world_agent/config', configName: 'webshop_', overrides: [] }),
    ).rejects.toThrow(/no Hydra config webshop_\.yaml in .*world_agent\/config: is --workdir the root of a checkout of the chosen stack\?/);
    await expect(
      checkHydraOverrides({
        python: '/nonexistent/python3',
        workdir: FIXTURE,
        configDir: 'recipe/world_agent/config',
        configName: 'alfworld_',
        overrides: [],
      }),
    ).rejects.toThrow(/--python \/nonexistent\/python3: not found/);
    await expect(
      checkHydraOverrides({
        python: '/usr/bin/python3',
        workdir: FIXTURE,
        configDir: 'recipe/world_agent/config',
        configName: 'alfworld_',
        overrides: [],
      }),
    ).rejects.toThrow(/hydra-core is not importable by .*--python/);
  }, 60_000);
});
