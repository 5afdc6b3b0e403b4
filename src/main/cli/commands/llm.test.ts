import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError, type CliContext } from '../types';
import llm from './llm';

function ctx(): { ctx: CliContext; out: () => string } {
  let buf = '';
  const stdout = new Writable({
    write(chunk, _enc, cb) {
      buf += String(chunk);
      cb();
    },
  });
  return { ctx: { dataDir: '/nonexistent', stdout, stderr: stdout, isTTY: false }, out: () => buf };
}

const dir = mkdtempSync(join(tmpdir(), 'arlarena-llm-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('arlarena llm', () => {
  it('refuses bad usage with a UsageError (exit 2)', async () => {
    await expect(llm.run([], ctx().ctx)).rejects.toThrow(UsageError);
    await expect(llm.run(['inspect'], ctx().ctx)).rejects.toThrow(/give the model folder/);
    await expect(llm.run(['inspect', dir, '--lora', 'r=0'], ctx().ctx)).rejects.toThrow(/lora.rank: must be an integer ≥ 1/);
    await expect(llm.run(['sample', dir, '--env', 'chess'], ctx().ctx)).rejects.toThrow(/--env chess: unknown/);
  });

  it('refuses a folder without config.json, or with an unsupported architecture, in one line (exit 1)', async () => {
    const c = ctx();
    expect(await llm.run(['inspect', dir], c.ctx)).toBe(1);
    expect(c.out()).toMatch(/^llm inspect: .* has no config.json — not a Hugging Face model folder/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ architectures: ['GPT2LMHeadModel'] }));
    const d = ctx();
    expect(await llm.run(['inspect', dir], d.ctx)).toBe(1);
    expect(d.out().trim().split('\n')).toHaveLength(1);
    expect(d.out()).toMatch(
      /architecture "GPT2LMHeadModel" is not supported; supported: Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM/,
    );
  });
});
