/**
 * New run with "A Hugging Face model folder", in browser mode: the page reads model folders only inside the
 * `arlarena serve --allow-dir` folder, here copies of the tiny test checkpoints Transformers made
 * (tests/support/hfCheckpoints.ts, needs the `llm` peer venv). Picking the Qwen3-shaped checkpoint shows its architecture, parameter count, the LoRA
 * trainable count and the memory estimate against this machine; a configuration far too large for any machine (every
 * weight trained, 65,536 rows per chunk) is refused by Start with the estimate in the message, and no run is made.
 * A folder outside the allowed one is refused in one line. A folder whose tokenizer has no chat template is refused by
 * Start with the API's sentence (sessions.start runs train --model hf:'s preflight) in the error toast, and no run is
 * made. Screenshots (light and dark) land in test-results/.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hfTestCheckpoints } from '../tests/support/hfCheckpoints';
import { openLabSession, screenshot, type LabSession } from './support/browser';
import { gotoView, waitUntil } from './uiHelpers';

let app: LabSession;
let page: Page;
let root = '';

beforeAll(async () => {
  // Copies of the built checkpoints (their cache stays as built), and one whose tokenizer lost its chat template.
  const built = hfTestCheckpoints();
  root = mkdtempSync(join(tmpdir(), 'arl-e2e-hf-'));
  for (const m of ['qwen3-fp16', 'qwen2-fp32', 'llama-bf16-sharded']) cpSync(join(built, m), join(root, m), { recursive: true });
  const bare = join(root, 'qwen3-no-template');
  cpSync(join(built, 'qwen3-fp16'), bare, { recursive: true });
  const tc = join(bare, 'tokenizer_config.json');
  const { chat_template: _dropped, ...rest } = JSON.parse(readFileSync(tc, 'utf8')) as Record<string, unknown>;
  writeFileSync(tc, JSON.stringify(rest));
  rmSync(join(bare, 'chat_template.jinja'), { force: true });
  app = await openLabSession({ serveArgs: ['--allow-dir', root] });
  page = app.page;
}, 400_000);

afterAll(async () => {
  await app?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function themes(name: string): Promise<void> {
  await screenshot(page, `${name}-light`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await waitUntil(
    'the dark theme',
    async () => (await page.evaluate(() => globalThis.matchMedia('(prefers-color-scheme: dark)').matches)) === true,
    5000,
    100,
  );
  await screenshot(page, `${name}-dark`);
  await page.emulateMedia({ colorScheme: 'light' });
}

const card = () => page.locator('[data-testid="hf-inspection"]');

describe('New run: a Hugging Face model folder', () => {
  it('lists the checkpoints under --allow-dir and shows the picked one: architecture, parameters, LoRA trainable, memory against the machine', async () => {
    await gotoView(page, 'new');
    await page.click('[data-testid="policy-hf"]');
    const found = page.locator('[data-testid="hf-found"]');
    await found.waitFor({ timeout: 30_000 });
    const options = await found.locator('option').allTextContents();
    expect(options).toEqual(
      expect.arrayContaining([
        `${join(root, 'qwen3-fp16')} (Qwen3ForCausalLM)`,
        `${join(root, 'qwen2-fp32')} (Qwen2ForCausalLM)`,
        `${join(root, 'llama-bf16-sharded')} (LlamaForCausalLM)`,
      ]),
    );
    await found.selectOption(join(root, 'qwen3-fp16'));
    await waitUntil('the inspection', async () => (await card().count()) === 1, 30_000);
    expect(await page.locator('[data-testid="hf-arch"]').innerText()).toBe('Qwen3ForCausalLM');
    expect(await page.locator('[data-testid="hf-params"]').innerText()).toMatch(/^[\d.]+ [kM] parameters$/);
    expect(await page.locator('[data-testid="hf-trainable"]').innerText()).toMatch(
      /LoRA r 16, α 32 on 7 projections: [\d.]+ [kM]? ?trainable \([\d.]+ % of the model\)/,
    );
    expect(await page.locator('[data-testid="hf-memory"]').innerText()).toMatch(/Weights[\s\S]*Activations[\s\S]*Total[\s\S]*This machine/);
    expect(await card().getAttribute('data-fits')).toBe('true');
    expect(await page.locator('[data-testid="hf-verdict"]').innerText()).toMatch(/^Fits: needs weights .* within [\d.]+ GiB/);
    await themes('ui-hf-newrun-estimate');
    expect(app.problems).toEqual([]);
  }, 120_000);

  it('refuses Start for a run too large for this machine, with the estimate, and makes no run', async () => {
    await page.click('[data-testid="hf-full"]');
    await page.fill('[data-testid="hf-rows"]', '65536');
    await waitUntil(
      'the new estimate',
      async () => (await card().count()) === 1 && (await card().getAttribute('data-fits')) === 'false',
      30_000,
    );
    expect(await page.locator('[data-testid="hf-trainable"]').innerText()).toMatch(/^Trains every weight/);
    const verdict = await page.locator('[data-testid="hf-verdict"]').innerText();
    expect(verdict).toMatch(
      /^Does not fit: needs weights [\d.]+ \w+ \+ gradients and AdamW state [\d.]+ \w+ \+ activations [\d.]+ GiB = [\d.]+ GiB, over [\d.]+ GiB/,
    );
    await page.click('[data-testid="start-sampo"]');
    const refusal = page.locator('[data-testid="hf-refusal"]');
    await refusal.waitFor({ timeout: 10_000 });
    const said = await refusal.innerText();
    expect(said).toMatch(
      /^Not started: the run does not fit: needs weights .* = [\d.]+ GiB, over [\d.]+ GiB .*; use fewer rows per chunk or a shorter context/,
    );
    const runs = await app.lab.call('runs.list', {});
    expect(runs.ok && runs.value.length).toBe(0);
    await themes('ui-hf-newrun-refused');
    expect(app.problems).toEqual([]);
  }, 120_000);

  it('refuses a folder outside --allow-dir in one line', async () => {
    await page.fill('[data-testid="hf-path"]', '/etc');
    const error = page.locator('[data-testid="hf-error"]');
    await error.waitFor({ timeout: 30_000 });
    expect(await error.innerText()).toBe(
      `in browser mode the lab reads model folders by path only inside ${JSON.stringify(root)}; "/etc" is not one of them`,
    );
    expect(await card().count()).toBe(0);
    expect(app.problems).toEqual([]);
  }, 60_000);

  it('starts a run on the picked folder with LoRA: model.source is the folder, the LoRA settings and the hf run settings are in its config', async () => {
    await page.selectOption('[data-testid="hf-found"]', join(root, 'qwen3-fp16'));
    await page.click('[data-testid="hf-lora"]');
    await page.fill('[data-testid="hf-rows"]', '');
    await page.fill('[data-testid="hf-rank"]', '4');
    await page.fill('[data-testid="hf-alpha"]', '8');
    await page.fill('[data-testid="run-steps"]', '2');
    await waitUntil(
      'the estimate',
      async () => (await card().count()) === 1 && (await card().getAttribute('data-fits')) === 'true',
      30_000,
    );
    expect(await page.locator('[data-testid="hf-trainable"]').innerText()).toMatch(/^Trains LoRA r 4, α 8 on 7 projections/);
    await page.click('[data-testid="start-sampo"]');
    let runId = '';
    await waitUntil(
      'the run',
      async () => {
        const r = await app.lab.call('runs.list', {});
        runId = r.ok && r.value.length === 1 ? r.value[0].id : '';
        return runId !== '';
      },
      30_000,
    );
    const run = await app.lab.call('runs.get', { runId });
    expect(run.ok).toBe(true);
    const model = (run.ok ? run.value.config.model : {}) as Record<string, unknown>;
    const compute = (run.ok ? run.value.config.compute : {}) as Record<string, unknown>;
    expect(model).toMatchObject({
      source: `hf:${join(root, 'qwen3-fp16')}`,
      maxSeqLen: 512,
      lora: { rank: 4, alpha: 8, dropout: 0.05, targets: 'q_proj+k_proj+v_proj+o_proj+gate_proj+up_proj+down_proj' },
    });
    expect(compute).toMatchObject({ logProbEngine: 'trainer', refLogProbEngine: 'trainer', workers: 1 });
    await app.lab.call('sessions.stop', { runId });
    expect(app.problems).toEqual([]);
  }, 120_000);

  it("shows the API's refusal of a folder without a chat template (train --model hf:'s sentence), and makes no run", async () => {
    const bare = join(root, 'qwen3-no-template');
    // The start above opened its run: back to New run.
    await gotoView(page, 'new');
    await page.click('[data-testid="policy-hf"]');
    await page.locator('[data-testid="hf-found"]').waitFor({ timeout: 30_000 });
    await page.selectOption('[data-testid="hf-found"]', bare);
    await waitUntil(
      'the estimate',
      async () => (await card().count()) === 1 && (await card().getAttribute('data-fits')) === 'true',
      30_000,
    );
    expect(await card().innerText()).toMatch(/No chat template: agent prompts need one/);
    const before = await app.lab.call('runs.list', {});
    await page.click('[data-testid="start-sampo"]');
    const toast = page.locator('[data-testid="api-error"]').last();
    await toast.waitFor({ timeout: 30_000 });
    expect(await toast.locator('[data-testid="api-error-headline"]').innerText()).toBe('Could not start the run');
    expect(await toast.locator('[data-testid="api-error-message"]').innerText()).toBe(
      `${bare}: tokenizer_config.json has no chat_template (and there is no chat_template.jinja); the agent's prompts go through it: use a chat (instruct) checkpoint or add a template (about the field overrides.model.source)`,
    );
    const after = await app.lab.call('runs.list', {});
    expect(after.ok && after.value.length).toBe(before.ok && before.value.length);
    await themes('ui-hf-newrun-no-template');
    expect(app.problems).toEqual([]);
  }, 120_000);
});
