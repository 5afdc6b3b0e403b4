/**
 * `remote verl --check` from the command line, with real Hydra (.venvs/hydra) against the tests' own config tree in
 * ARLArena's layout (tests/fixtures/verl/arlarena-layout): a clean launch passes, a wrong key fails, and a
 * submission whose check fails submits nothing (it never reaches the cluster).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { venvPython } from '../../../../tests/support/peers';
import { testCliContext } from '../../testing/testContext';
import { runVerl } from './remoteVerl';

const PY = venvPython('hydra');
const FIXTURE = resolve('tests/fixtures/verl/arlarena-layout');

async function verl(args: string[]) {
  const c = testCliContext('/nonexistent');
  return { code: await runVerl(args, c.ctx), out: c.out(), err: c.err() };
}

/** An ALFWorld launch of Qwen3-4B on 4 GPUs, checked by the hydra venv's python. */
const ALFWORLD = ['--env', 'alfworld', '--model', 'Qwen/Qwen3-4B', '--gpus', '4'];
const CHECKED = ['--check', '--workdir', FIXTURE, '--python', PY];
/** verl-agent's own config for ALFWorld in the fixture tree. */
const VERL_AGENT_CONFIG = ['--config-dir', 'recipe/world_agent/config', '--config-name', 'alfworld_'];

describe('arlarena remote verl --check', () => {
  it("passes for the SAMPO launch of each env, and prints the launch with the check's verdict", async () => {
    for (const env of ['alfworld', 'webshop', 'sokoban']) {
      const r = await verl(['--env', env, '--model', 'Qwen/Qwen3-4B', '--gpus', '4', ...CHECKED]);
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(new RegExp(`# check: all \\d+ overrides compose against recipe/\\w+_agent/config/\\w+_\\.yaml in ${FIXTURE}`));
      expect(r.out.split('\n').find((l) => l.startsWith('cd '))).toBe(
        `cd ${FIXTURE} && python3 -m examples.data_preprocess.prepare --mode text --train_data_size ${env === 'sokoban' ? 32 : 16} --val_data_size ${env === 'webshop' ? 256 : 128} && \\`,
      );
    }
  }, 60_000);

  it("reports an unset required field, exits 1; verl-agent's launch fails on ARLArena's config at exactly its two penalty keys", async () => {
    const r = await verl([...ALFWORLD, ...CHECKED, '--experiment', 'x', '--config-name', 'alfworld_required']);
    expect(r.code).toBe(1);
    expect(r.out).toContain('# check: missing required field: env.alfworld.data_root is ??? in the config and no override sets it');
    const va = await verl(['--stack', 'verl-agent', ...ALFWORLD, ...CHECKED, ...VERL_AGENT_CONFIG]);
    expect(va.code).toBe(1);
    expect(va.out).toContain(
      '# check: unknown key: actor_rollout_ref.actor.use_invalid_action_penalty=True — the config has no actor_rollout_ref.actor.use_invalid_action_penalty',
    );
    expect(va.err).toBe("remote verl --check: 2 problems against the checkout's Hydra config\n");
  }, 60_000);

  it('--on runs the check first: a launch that fails it is not submitted (the cluster is never contacted)', async () => {
    const r = await verl([
      '--stack',
      'verl-agent',
      ...ALFWORLD,
      '--on',
      'http://127.0.0.1:9',
      '--workdir',
      '/cluster/ARLArena',
      '--check-dir',
      FIXTURE,
      '--python',
      PY,
      ...VERL_AGENT_CONFIG,
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('; nothing was submitted');
    expect(r.err).not.toContain('submitted Ray job');
    expect(r.out).toContain('cd /cluster/ARLArena && python3 -m examples.data_preprocess.prepare');
  }, 60_000);
});
