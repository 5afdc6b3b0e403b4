/**
 * `arlarena warmstart` flag checks between its two paths: the LLM warm start's flags (--lora, --steps, --resume …)
 * are refused for the lab model, the lab model's (--updates, --max-minutes) for --model hf:PATH, and a folder that
 * is no Hugging Face model is refused in one line before anything is written — each naming the flag and the fix.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import warmstart from './warmstart';
import { testCliContext } from '../../testing/testContext';

const work = mkdtempSync(join(tmpdir(), 'arlarena-warmstart-flags-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const cli = () => testCliContext(work);

describe('arlarena warmstart: the lab model and --model hf:PATH take their own flags', () => {
  it('refuses the LLM flags for the lab model', async () => {
    await expect(warmstart.run(['--lora', 'r=4,alpha=8'], cli().ctx)).rejects.toThrow(/--lora is for --model hf:PATH/);
    await expect(warmstart.run(['--steps', '3'], cli().ctx)).rejects.toThrow(/--steps is for --model hf:PATH .*takes --updates/);
    await expect(warmstart.run(['--resume'], cli().ctx)).rejects.toThrow(/--resume is for --model hf:PATH/);
  });

  it("refuses the lab model's flags, an empty folder and a bad --lora for --model hf:PATH", async () => {
    await expect(warmstart.run(['--model', 'hf:'], cli().ctx)).rejects.toThrow(/give the model folder after "hf:"/);
    await expect(warmstart.run(['--model', 'hf:/m', '--updates', '3'], cli().ctx)).rejects.toThrow(
      /--updates is for the lab model; .*--steps N/,
    );
    await expect(warmstart.run(['--model', 'hf:/m', '--max-minutes', '3'], cli().ctx)).rejects.toThrow(
      /--max-minutes is for the lab model/,
    );
    await expect(warmstart.run(['--model', 'hf:/m', '--lora', 'r=0,alpha=8'], cli().ctx)).rejects.toThrow(/rank/);
    await expect(warmstart.run(['--model', 'hf:/m', '--lr', 'fast'], cli().ctx)).rejects.toThrow(/--lr "fast": expected a number > 0/);
  });

  it('refuses a folder without config.json in one line, writing nothing', async () => {
    const c = cli();
    const out = join(work, 'out');
    expect(await warmstart.run(['--model', `hf:${work}`, '--out', out, '--set', 'compute.backend=wasm'], c.ctx)).toBe(1);
    expect(c.err().trim().split('\n').at(-1)).toMatch(/^warmstart: .*has no config\.json — not a Hugging Face model folder/);
    expect(existsSync(out)).toBe(false);
  });
});
