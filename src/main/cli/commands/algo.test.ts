import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

function probe(input: string, args: string[] = []) {
  return spawnSync(process.execPath, ['bin/arlarena.mjs', 'algo', ...args], { cwd: root, input, encoding: 'utf8', timeout: 60_000 });
}

describe('arlarena algo (JSON probe through the real CLI)', () => {
  it('answers one case with {"outputs"} on stdout and nothing on stderr (no tfjs banner)', () => {
    const r = probe(
      JSON.stringify({
        fn: 'policy_loss_vanilla',
        params: { clip_ratio: 0.2 },
        inputs: {
          old_log_prob: [
            [-1, -1.2],
            [-0.5, -2],
          ],
          log_prob: [
            [-0.8, -1.2],
            [-0.9, -2],
          ],
          advantages: [
            [1, 1],
            [-1, -1],
          ],
          response_mask: [
            [1, 1],
            [1, 0],
          ],
        },
      }),
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { outputs: Record<string, unknown> };
    expect(out.outputs.pg_loss as number).toBeCloseTo((-1.2 - 1 + 0.8) / 3, 6);
    expect(out.outputs.grad_log_prob).toEqual([
      [0, expect.closeTo(-1 / 3, 6)],
      [0, 0],
    ]);
  });

  it('--list prints the catalogs and the presets', () => {
    const r = probe('', ['--list']);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, Array<{ name: string }>>;
    expect(out.policyLoss.map((e) => e.name)).toEqual(['vanilla', 'cispo', 'sapo', 'gspo']);
    expect(out.presets[0].name).toBe('sampo');
    expect(out.rolloutIs.map((e) => e.name)).toEqual(['token', 'sequence', 'icepop']);
    expect(out.rolloutRs).toHaveLength(11);
    expect(out.bypassLoss.map((e) => e.name)).toEqual(['ppo_clip', 'reinforce']);
  });

  it("rollout_correction through the CLI: verl's names in, weights / mask / rollout_corr metrics out", () => {
    const r = probe(
      JSON.stringify({
        fn: 'rollout_correction',
        params: { rollout_is: 'sequence', rollout_rs: 'seq_mean_k1', rollout_rs_threshold: 1.5 },
        inputs: { old_log_prob: [[-1, -2]], rollout_log_prob: [[-1.2, -1.9]], response_mask: [[1, 1]] },
      }),
    );
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout).outputs;
    expect(out.rollout_is_weights[0][0]).toBeCloseTo(Math.exp(0.1), 12);
    expect(out.modified_response_mask).toEqual([[1, 1]]);
    expect(Object.keys(out.metrics).every((k: string) => k.startsWith('rollout_corr/'))).toBe(true);
  });

  it('malformed input: one line naming the problem, exit code 2', () => {
    const r = probe('{"fn": "agg_loss", "inputs": {"loss_mat": [[1, 2], [3]], "loss_mask": [[1, 1], [1]]}}');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/inputs.loss_mat is ragged/);
  });
});
