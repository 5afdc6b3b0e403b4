/**
 * preflightHfRun refuses, before a run record exists, a folder whose tokenizer has no chat template: every agent
 * prompt goes through it, and `train --model hf:` on such a folder (a base checkpoint's tokenizer saved without one)
 * made a run that failed at its first step with the same reason, left in the store as a failed run. It reads the
 * folder's headers, never its weights' bytes: Start does not wait a full read of a multi-GB checkpoint.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../core/config/index';
import { TINY_QWEN2_CONFIG, writeHfFolder } from '../../testing/hfFolder';
import { HfFolderError } from './hfFolder';
import { preflightHfRun } from './hfRunModel';

const dir = mkdtempSync(join(tmpdir(), 'arl-hf-preflight-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configFor = (folder: string) =>
  resolveConfig('sampo', 'sokoban', {
    'model.source': `hf:${folder}`,
    'model.maxSeqLen': 512,
    'compute.rolloutEngine': 'tfjs',
    'compute.logProbEngine': 'trainer',
    'compute.refLogProbEngine': 'trainer',
    'warmStart.source': 'none',
  }).config!;

describe('preflightHfRun', () => {
  it('refuses a tokenizer without a chat template, naming the folder and the fix; passes one with it', async () => {
    const folder = join(dir, 'no-template');
    mkdirSync(folder);
    writeHfFolder(folder, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: 1024 } });
    const machine = { totalBytes: 64 * 2 ** 30, backend: 'wasm' } as const;
    expect((await preflightHfRun(configFor(folder), machine)).memory).toMatch(/^fits/);

    const tc = join(folder, 'tokenizer_config.json');
    const { chat_template: _dropped, ...rest } = JSON.parse(readFileSync(tc, 'utf8')) as Record<string, unknown>;
    writeFileSync(tc, JSON.stringify(rest));
    const e = await preflightHfRun(configFor(folder), machine).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(HfFolderError);
    expect((e as Error).message).toBe(
      `${folder}: tokenizer_config.json has no chat_template (and there is no chat_template.jinja); the agent's prompts go through it: use a chat (instruct) checkpoint or add a template`,
    );
  });

  it('reads no weight bytes: a shard whose header is whole and whose body is a 64 GiB hole passes at once', async () => {
    // The hole is after the last tensor (the header's promises hold, so every structural check passes): a preflight
    // that read or hashed the file's bytes (as it did before) takes minutes here, past this test's timeout.
    const folder = join(dir, 'sparse');
    mkdirSync(folder);
    writeHfFolder(folder, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: 1024 }, shards: true });
    const shard = join(folder, 'model-00002-of-00002.safetensors');
    truncateSync(shard, statSync(shard).size + 64 * 2 ** 30);
    const machine = { totalBytes: 64 * 2 ** 30, backend: 'wasm' } as const;
    const started = performance.now();
    const r = await preflightHfRun(configFor(folder), machine);
    expect(r.memory).toMatch(/^fits/);
    expect(r.info.weightFiles).toEqual(['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors']);
    expect(r.model.architecture).toBe('Qwen2ForCausalLM');
    expect(performance.now() - started).toBeLessThan(5000);
  }, 20_000);

  it('still refuses a shard shorter than its header promises and a shard the index names that is missing', async () => {
    const folder = join(dir, 'broken');
    mkdirSync(folder);
    writeHfFolder(folder, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: 1024 }, shards: true });
    const machine = { totalBytes: 64 * 2 ** 30, backend: 'wasm' } as const;
    const shard = join(folder, 'model-00002-of-00002.safetensors');
    truncateSync(shard, statSync(shard).size - 1);
    await expect(preflightHfRun(configFor(folder), machine)).rejects.toThrow(
      /model-00002-of-00002\.safetensors is truncated: .* bytes, but tensor ".*" ends at byte .*; copy the file again/,
    );
    rmSync(shard);
    await expect(preflightHfRun(configFor(folder), machine)).rejects.toThrow(
      `${folder}: model.safetensors.index.json names model-00002-of-00002.safetensors, which is not in the folder (copy every shard)`,
    );
  });
});
