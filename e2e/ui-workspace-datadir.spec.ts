/**
 * The workspace is kept in the data directory (workspace.get / workspace.set → DATA/workspace.json), so another
 * browser on the same lab — or the desktop app on the same data directory — opens the runs table and Compare as
 * they were left, with nothing in its own storage: two imported verl console logs; browser A adds a config
 * column and a search, then in Compare smooths and hides a run; browser B (a fresh context) gets the table's
 * column and search, and Compare's smoothing and hidden run, both from the data directory, Compare opened
 * straight from a link without its workspace (before the lab has answered). A's Compare link reopens the view.
 * Compare's x-axis menu offers the logged counter both runs count up with (runs.axisKeys), not one a run restarts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPage, startSpecLab, type AppPage, type SpecLab } from './support/browser';
import { importLogs, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

/** A verl console log: its config dict as verl pprints it, then `step:N - key:value …`, validation every 5 steps. */
function verlLog(lr: string, quality: number, epoch: (s: number) => number): string {
  const lines = [`(main_task pid=1) {'actor_rollout_ref': {'actor': {'optim': {'lr': ${lr}}}}, 'algorithm': {'adv_estimator': 'grpo'}}`];
  for (let s = 1; s <= 15; s++) {
    const score = quality * (0.3 + (0.7 * s) / 15);
    const kv = [
      `actor/entropy_loss:${(0.3 - 0.01 * s).toFixed(4)}`,
      `critic/score/mean:${score.toFixed(4)}`,
      `training/epoch:${epoch(s)}`,
      `training/global_step:${s}`,
    ];
    if (s % 5 === 0) kv.push(`val-core/openai/gsm8k/reward/mean@1:${(score - 0.05).toFixed(4)}`);
    lines.push(`(main_task pid=1) step:${s} - ${kv.join(' - ')}`);
  }
  return `${lines.join('\n')}\n`;
}

let spec: SpecLab | undefined;
let lab: Lab;
let browser: Browser;
let ids: string[] = [];
let wsFile = '';

beforeAll(async () => {
  spec = await startSpecLab('arlarena-ws-datadir-e2e-', (work, dataDir) => {
    // The second log's epoch counter starts again at step 11 (a resumed log): not an x-axis for the pair.
    ids = importLogs(work, dataDir, [
      ['lr1e-6.log', verlLog('1e-06', 0.9, (s) => Math.floor(s / 5))],
      ['lr3e-6.log', verlLog('3e-06', 0.6, (s) => (s > 10 ? 0 : 1))],
    ]);
    expect(ids).toHaveLength(2);
    wsFile = join(dataDir, 'workspace.json');
  });
  ({ lab, browser } = spec);
});

afterAll(() => spec?.close());

/** The app at `path` in a new page of `context`, not waiting for it to be ready (browser B opens before the lab answers). */
const open = (context: BrowserContext, path: string): Promise<AppPage> => openPage(context, lab, path);

/** workspace.json as the lab wrote it (null while it has not). */
function saved(): any {
  return existsSync(wsFile) ? JSON.parse(readFileSync(wsFile, 'utf8')) : null;
}

let lrKey = '';
let compareLink = '';
const setKey = () => [...ids].sort().join(',');

it('browser A: the runs table and Compare as left are written to the data directory', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await open(context, '/?view=runs');
  await page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
  await page.waitForSelector('tr[data-run-id]');
  await page.click('[data-testid="runs-columns"] summary');
  await page.fill('[data-testid="runs-columns-filter"]', 'optim.lr');
  const lrBox = page.locator('[data-testid="runs-columns"] input[data-key^="config:"]');
  await waitUntil('the learning-rate column choice', async () => (await lrBox.count()) === 1, 10_000);
  lrKey = (await lrBox.getAttribute('data-key'))!;
  await lrBox.check();
  await page.click('h2#runs-title');
  await page.fill('[data-testid="runs-search"]', 'lr');
  await waitUntil(
    'the runs workspace in workspace.json',
    async () => saved()?.runs?.search === 'lr' && (saved()?.runs?.columns ?? []).includes(lrKey),
    10_000,
  );

  await page.goto(`${lab.origin}/?view=compare&runs=${ids.join(',')}#token=${lab.token}`, { waitUntil: 'load' });
  await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
  // The x-axis menu offers the logged counter that never goes back in either run, not the restarted epoch.
  const xOptions = () => page.locator('select[aria-label="x-axis"] option').evaluateAll((els) => els.map((e) => e.getAttribute('value')));
  await waitUntil('the logged x-axis keys', async () => (await xOptions()).length > 3, 10_000);
  expect(await xOptions()).toEqual(['step', 'wall', 'tokens', 'key:training/global_step']);
  await page.selectOption('select[aria-label="Smoothing"]', 'ema');
  await page.click(`[data-testid="compare-legend"] button.entry[data-key="${ids[1]}"]`);
  await waitUntil(
    "the compared set's view in workspace.json",
    async () => {
      const q: string = saved()?.sets?.[setKey()]?.q ?? '';
      return q.includes('smooth=ema') && q.includes(`hide=${ids[1]}`);
    },
    10_000,
  );
  expect(saved().compare.smoothing).toBe('ema');
  compareLink = new URL(page.url()).search;
  expect(compareLink).toContain(`hide=${ids[1]}`);
  expect(problems).toEqual([]);
  await context.close();
});

it('browser B, nothing in its storage: the table and Compare open as A left them, from the data directory', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // Compare first, straight from a link without its workspace: the view draws before the lab's calls, and the
  // saved view of these runs applies when it arrives.
  const cmp = await open(context, `/?view=compare&runs=${ids.join(',')}`);
  await cmp.page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
  await waitUntil('the saved smoothing', async () => (await cmp.page.inputValue('select[aria-label="Smoothing"]')) === 'ema', 20_000);
  await waitUntil(
    'the saved hidden run',
    async () =>
      (await cmp.page.getAttribute(`[data-testid="compare-legend"] button.entry[data-key="${ids[1]}"]`, 'aria-pressed')) === 'false',
    10_000,
  );
  expect(await cmp.page.getAttribute(`[data-testid="compare-legend"] button.entry[data-key="${ids[0]}"]`, 'aria-pressed')).toBe('true');
  await waitUntil('the address to carry it', async () => new URL(cmp.page.url()).searchParams.get('hide') === ids[1], 10_000);

  const runs = await open(context, '/?view=runs');
  await runs.page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
  await waitUntil('the saved column', async () => (await runs.page.locator(`td[data-col="${lrKey}"]`).count()) === 2, 10_000);
  expect(await runs.page.inputValue('[data-testid="runs-search"]')).toBe('lr');
  expect([...cmp.problems, ...runs.problems]).toEqual([]);
  // Opening them wrote nothing of B's defaults over what A left.
  expect(saved().compare.smoothing).toBe('ema');
  expect(saved().sets[setKey()].q).toContain(`hide=${ids[1]}`);
  expect(saved().runs.search).toBe('lr');
  await context.close();
});

it("A's Compare link opens the same view in a third browser", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await open(context, `/${compareLink}`);
  await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
  expect(await page.inputValue('select[aria-label="Smoothing"]')).toBe('ema');
  expect(await page.getAttribute(`[data-testid="compare-legend"] button.entry[data-key="${ids[1]}"]`, 'aria-pressed')).toBe('false');
  expect(problems).toEqual([]);
  await context.close();
});

it('"Compare with…" picker takes a query as the runs table does (a config key, a headline number), and says what it cannot read', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await open(context, `/?view=compare&runs=${ids[0]}`);
  const picker = page.locator('[data-testid="compare-picker"]');
  await picker.waitFor({ timeout: 30_000 });
  await page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
  const labels = async () =>
    (await picker.locator('.pick-grid label').allTextContents()).map((t) => (t.includes('lr3e-6') ? 'lr3e-6' : 'lr1e-6'));
  await waitUntil('both runs listed', async () => (await labels()).length === 2, 10_000);
  const ticked = (await picker.locator('.pick-grid label:has(input:checked)').textContent())!;
  const tickedLr = ticked.includes('lr3e-6') ? 'lr3e-6' : 'lr1e-6';
  const search = picker.locator('[data-testid="compare-run-search"]');
  for (const [query, match] of [
    ['actor_rollout_ref.actor.optim.lr > 2e-6', 'lr3e-6'],
    ['actor_rollout_ref.actor.optim.lr < 2e-6', 'lr1e-6'],
  ] as const) {
    await search.fill(query);
    // The ticked run stays; the query adds the run it matches.
    await waitUntil(
      `the picker to follow “${query}”`,
      async () => new Set(await labels()).size === new Set([tickedLr, match]).size,
      10_000,
    );
    expect(new Set(await labels())).toEqual(new Set([tickedLr, match]));
  }
  await search.fill('val/score_mean > high');
  await waitUntil('the error', async () => (await picker.locator('[data-testid="compare-run-query-error"]').count()) === 1, 10_000);
  expect(await picker.locator('[data-testid="compare-run-query-error"]').textContent()).toContain('compares numbers');
  expect(problems).toEqual([]);
  await context.close();
});
