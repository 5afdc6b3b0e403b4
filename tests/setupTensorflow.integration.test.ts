/**
 * scripts/setup-tensorflow.sh when its wheel cannot be had: a pinned version PyPI does not have (asked of the real
 * index through pip, into a scratch venv folder) is refused with one line that says why and that training stays
 * where it was, node_modules is left as it was, and the lab still trains on tfjs-wasm. A malformed pin is refused
 * before anything is downloaded. Needs PyPI (pip's ordinary index or its configured mirror).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTraining } from '../src/core/training/trainer';
import { initBackend } from '../src/main/compute/index';
import { deps, recorder, tinyConfig } from './tinyTrainer';

const root = join(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'arl-tfsetup-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const binding = join(root, 'node_modules/@tensorflow/tfjs-node/lib/napi-v8/tfjs_binding.node');
const digest = (): string => (existsSync(binding) ? createHash('sha256').update(readFileSync(binding)).digest('hex') : 'absent');

function setup(version: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['scripts/setup-tensorflow.sh'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, ARLARENA_TF_VERSION: version, ARLARENA_TF_HOME: join(scratch, 'tf') },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('setup:tensorflow refuses cleanly', () => {
  it('a pinned version PyPI does not have: one line, exit 1, node_modules untouched, and the lab trains on wasm', async () => {
    const before = digest();
    const r = setup('0.0.1');
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^setup:tensorflow: FAILED \(cpu\): pip could not install tensorflow-cpu==0\.0\.1: .*(No matching distribution|Could not find a version).* — (training stays on tfjs-wasm|the native build already in node_modules is left as it was) \(full log: /,
    );
    expect(r.stdout).toMatch(/downloading the tensorflow-cpu 0\.0\.1 wheel \(≈ 270 MB/);
    expect(existsSync(join(scratch, 'tf'))).toBe(false);
    expect(existsSync(join(scratch, 'tf.new'))).toBe(false);
    expect(digest()).toBe(before);

    expect((await initBackend('wasm')).training).toBe('wasm');
    const rec = recorder();
    const res = await runTraining(tinyConfig('grpo', { 'compute.backend': 'wasm' }), deps(), rec.hooks);
    expect(res.step).toBe(1);
    expect(rec.rec.metrics[0].values['actor/grad_norm']).toBeGreaterThan(0);
  }, 180_000);

  it('a malformed pin is refused before any download', () => {
    const r = setup('latest');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toMatch(/^setup:tensorflow: FAILED \(cpu\): ARLARENA_TF_VERSION 'latest' is not a version like 2\.21\.0 — /);
  });
});
