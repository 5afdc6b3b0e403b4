import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../types';
import { byteLevelTokenizerJson, TINY_QWEN2_CONFIG, writeHfFolder } from '../../testing/hfFolder';
import { testCliContext } from '../../testing/testContext';
import llm from './llm';

/** No data dir; stdout and stderr in one string, as a terminal shows them. */
const ctx = () => testCliContext('/nonexistent', { merged: true });

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

  it("inspect estimates for at most the model's context (max_position_embeddings), and says so", async () => {
    const model = mkdtempSync(join(tmpdir(), 'arlarena-llm-ctx-'));
    try {
      writeHfFolder(model, {
        config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: 512, vocab_size: 4 },
        tokenizer: byteLevelTokenizerJson({ vocab: { '<eos>': 0, a: 1, b: 2, ab: 3 } }),
        chatTemplate: "{% for m in messages %}{{ m['content'] }}<eos>{% endfor %}",
      });

      // The default context (1024) and a longer --seq-len are both clamped to the model's 512, named in the line.
      for (const args of [[], ['--seq-len', '4096']]) {
        const c = ctx();
        await llm.run(['inspect', model, '--rows', '1', ...args], c.ctx);
        const asked = args.length ? 4096 : 1024;
        expect(c.out()).toContain(
          `1 rows × 512 tokens (the model's context, config.json max_position_embeddings 512; ${asked} asked) (256 response)`,
        );
      }
      const j = ctx();
      await llm.run(['inspect', model, '--rows', '1', '--json'], j.ctx);
      const rec = JSON.parse(j.out()) as { work: { seqLen: number }; askedSeqLen: number };
      expect(rec.work.seqLen).toBe(512);
      expect(rec.askedSeqLen).toBe(1024);
      // Within the context nothing changes and nothing is said; a response longer than its row is cut to fit.
      const s = ctx();
      await llm.run(['inspect', model, '--rows', '1', '--seq-len', '300', '--response-tokens', '400'], s.ctx);
      expect(s.out()).toContain('1 rows × 300 tokens (299 response, 400 asked)');
    } finally {
      rmSync(model, { recursive: true, force: true });
    }
  });

  it('inspect gives a small checkpoint its exact parameter count and its memory in MiB, not "0.0 M" and "0.00 GiB"', async () => {
    const model = mkdtempSync(join(tmpdir(), 'arlarena-llm-small-'));
    try {
      writeHfFolder(model, {
        config: { ...TINY_QWEN2_CONFIG, vocab_size: 4 },
        tokenizer: byteLevelTokenizerJson({ vocab: { '<eos>': 0, a: 1, b: 2, ab: 3 } }),
        chatTemplate: "{% for m in messages %}{{ m['content'] }}<eos>{% endfor %}",
      });
      const j = ctx();
      await llm.run(['inspect', model, '--rows', '1', '--seq-len', '64', '--lora', 'r=2,alpha=4', '--json'], j.ctx);
      const rec = JSON.parse(j.out()) as { memory: { params: number; trainableParams: number } };
      expect(rec.memory.params).toBeLessThan(1e6);
      const c = ctx();
      await llm.run(['inspect', model, '--rows', '1', '--seq-len', '64', '--lora', 'r=2,alpha=4'], c.ctx);
      expect(c.out()).toContain(`Qwen2ForCausalLM, ${rec.memory.params} parameters (`);
      expect(c.out()).toContain(`(${rec.memory.trainableParams} trainable)`);
      expect(c.out()).toMatch(/: weights \d+\.\d MiB \+ adapters \d+\.\d MiB \+ activations \d+\.\d MiB = \d+\.\d MiB\n/);
      expect(c.out()).not.toMatch(/0\.0 M parameters|0\.00 M trainable|0\.00 GiB/);
    } finally {
      rmSync(model, { recursive: true, force: true });
    }
  });

  it("sample cuts --max-new-tokens to the room the prompt leaves in the model's context, and refuses a prompt that fills it, in one line", async () => {
    const model = mkdtempSync(join(tmpdir(), 'arlarena-llm-room-'));
    try {
      // The prompt's length first, on a context with room to spare.
      writeHfFolder(model, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: 8192 } });
      const wide = ctx();
      expect(await llm.run(['sample', model, '--max-new-tokens', '2', '--json'], wide.ctx)).toBe(0);
      const prompt = (JSON.parse(wide.out().trim().split('\n').at(-1)!) as { promptTokens: number }).promptTokens;

      writeHfFolder(model, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: prompt + 3 } });
      const cut = testCliContext('/nonexistent');
      expect(await llm.run(['sample', model, '--max-new-tokens', '10', '--json'], cut.ctx)).toBe(0);
      expect((JSON.parse(cut.out().trim()) as { responseTokens: number }).responseTokens).toBeLessThanOrEqual(3);
      expect(cut.err()).toContain(
        `llm sample: --max-new-tokens 10 cut to 3: the prompt's ${prompt} tokens leave 3 of the model's context (config.json max_position_embeddings ${prompt + 3})`,
      );

      writeHfFolder(model, { config: { ...TINY_QWEN2_CONFIG, max_position_embeddings: prompt } });
      const full = testCliContext('/nonexistent');
      expect(await llm.run(['sample', model], full.ctx)).toBe(1);
      expect(full.err()).toMatch(
        new RegExp(
          `^llm sample: the sokoban prompt is ${prompt} tokens \\(chat template\\), which fills the model's context \\(config.json max_position_embeddings ${prompt}\\)[^\\n]*\\n$`,
        ),
      );
    } finally {
      rmSync(model, { recursive: true, force: true });
    }
  }, 60_000);
});
