/**
 * preflightHfRun refuses, before a run record exists, a folder whose tokenizer has no chat template: every agent
 * prompt goes through it, and `train --model hf:` on such a folder (a base checkpoint's tokenizer saved without one)
 * made a run that failed at its first step with the same reason, left in the store as a failed run.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
});
