/**
 * The workspace a W&B user expects, on three imported verl runs whose configs differ (learning rate, advantage
 * estimator), in a 1280×800 window:
 * - the runs table adds a config key as a column (from the Columns menu, filtered), sorts by it and filters with a
 *   query naming a config key and a headline number; the table never widens the page and the row actions stay in
 *   view; the table's workspace is in the address and comes back for the project without it;
 * - Compare's parallel-coordinates panel draws one line per run through the differing config keys to the
 *   validation score, and its axes go into the address.
 * Screenshots (light and dark): test-results/ui-workspace-{runs,parallel}-{light,dark}.png.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPage, screenshot, startSpecLab, type AppPage, type SpecLab } from './support/browser';
import { importLogs, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

/** A float as Python prints it (`1e-06`, not JavaScript's `0.000001`). */
function pyFloat(x: number): string {
  return x.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
}

/** A verl console log (its config dict as verl pprints it before training, then `step:N - key:value …`), validation every 5 steps. */
function verlLog(steps: number, lr: number, estimator: string, quality: number): string {
  const lines = [
    `(main_task pid=1) {'actor_rollout_ref': {'actor': {'optim': {'lr': ${pyFloat(lr)}}}}, 'algorithm': {'adv_estimator': '${estimator}'}, 'data': {'train_batch_size': 256}}`,
  ];
  for (let s = 1; s <= steps; s++) {
    const score = Math.min(0.95, quality * (0.3 + (0.7 * s) / steps));
    const kv: [string, number][] = [
      ['actor/entropy_loss', 0.3 - 0.01 * s],
      ['actor/grad_norm', 2 + (s % 5) / 3],
      ['critic/score/mean', score],
      ['response_length/mean', 150 + 3 * s],
    ];
    if (s % 5 === 0) kv.push(['val-core/openai/gsm8k/reward/mean@1', score - 0.05]);
    lines.push(`(main_task pid=1) step:${s} - ${kv.map(([k, v]) => `${k}:${v.toFixed(4)}`).join(' - ')}`);
  }
  return `${lines.join('\n')}\n`;
}

const RUNS = [
  { file: 'gae-lr1e-6.log', lr: 1e-6, est: 'gae', q: 0.7 },
  { file: 'grpo-lr1e-6.log', lr: 1e-6, est: 'grpo', q: 0.9 },
  { file: 'grpo-lr3e-6.log', lr: 3e-6, est: 'grpo', q: 0.5 },
];

let spec: SpecLab | undefined;
let lab: Lab;
let browser: Browser;
let ids: string[] = [];

beforeAll(async () => {
  spec = await startSpecLab('arlarena-workspace-e2e-', (work, dataDir) => {
    ids = importLogs(
      work,
      dataDir,
      RUNS.map((r) => [r.file, verlLog(20, r.lr, r.est, r.q)]),
    );
    expect(ids).toHaveLength(3);
  });
  ({ lab, browser } = spec);
});

afterAll(() => spec?.close());

async function open(context: BrowserContext, path: string): Promise<AppPage> {
  const app = await openPage(context, lab, path);
  await app.page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
  return app;
}

const names = (page: Page) => page.locator('tbody tr[data-run-id] .run-name').allTextContents();

async function fits(page: Page): Promise<void> {
  const sizes = await page.locator('table.runs').evaluate(() => {
    const page = document.documentElement.clientWidth;
    // What sticks out, when something does (the outermost elements past the right edge), for the failure message.
    const over = [...document.querySelectorAll('body *')]
      .filter(
        (e) => e.getBoundingClientRect().right > page + 1 && !(e.parentElement && e.parentElement.getBoundingClientRect().right > page + 1),
      )
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} right=${Math.round(e.getBoundingClientRect().right)}`);
    return { page, doc: document.documentElement.scrollWidth, over };
  });
  expect(sizes.doc, JSON.stringify(sizes)).toBeLessThanOrEqual(sizes.page);
  for (const button of await page.locator('td.actions button').all()) {
    const box = (await button.boundingBox())!;
    expect(box.x + box.width, 'a row action is off screen').toBeLessThanOrEqual(1280);
  }
}

it('runs table: a config key as a sortable column and in a query; fits 1280 px; its workspace is in the address and saved for the project', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await open(context, '/?view=runs');
  await page.waitForSelector('tr[data-run-id]');
  // The Columns menu lists config keys; its filter finds the learning rate.
  await page.click('[data-testid="runs-columns"] summary');
  await page.fill('[data-testid="runs-columns-filter"]', 'optim.lr');
  const lrBox = page.locator('[data-testid="runs-columns"] input[data-key^="config:"]');
  await waitUntil('the learning-rate column choice', async () => (await lrBox.count()) === 1, 10_000);
  const lrKey = (await lrBox.getAttribute('data-key'))!;
  expect(lrKey).toMatch(/^config:.*optim\.lr$/);
  await lrBox.check();
  await page.fill('[data-testid="runs-columns-filter"]', 'adv_estimator');
  await page.locator('[data-testid="runs-columns"] input[data-key$="adv_estimator"]').check();
  await page.click('h2#runs-title');
  const lrCells = page.locator(`td[data-col="${lrKey}"]`);
  expect((await lrCells.allTextContents()).sort()).toEqual(['1e-6', '1e-6', '3e-6'].sort().map((v) => String(Number(v))));
  // Sort by it (a first click sorts descending): the 3e-6 run first.
  await page.locator('thead button.sort', { hasText: lrKey.slice('config:'.length) }).click();
  await waitUntil('the sort by learning rate', async () => (await names(page))[0]?.includes('lr3e-6') ?? false, 10_000);
  // A query naming a config key and a headline number.
  const estimatorKey = (await page.locator('thead th').allTextContents())
    .find((t) => t.includes('adv_estimator'))!
    .replace(/[▲▼]/g, '')
    .trim();
  await page.fill('[data-testid="runs-search"]', `${estimatorKey} = grpo and val/score_mean > 0.6`);
  await waitUntil('the query to filter', async () => (await names(page)).length === 1, 10_000);
  expect((await names(page))[0]).toContain('grpo-lr1e-6');
  expect(await page.locator('[data-testid="runs-query-error"]').count()).toBe(0);
  await fits(page);
  // The workspace is in the address.
  const url = new URL(page.url());
  expect(url.searchParams.get('q')).toBe(`${estimatorKey} = grpo and val/score_mean > 0.6`);
  expect(url.searchParams.get('cols')).toContain(lrKey);
  await page.fill('[data-testid="runs-search"]', '');
  await waitUntil('every run back', async () => (await names(page)).length === 3, 10_000);
  for (const dark of [false, true]) {
    await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
    await fits(page);
    await screenshot(page, `ui-workspace-runs-${dark ? 'dark' : 'light'}`);
  }
  expect(problems).toEqual([]);
  // Opened again without the workspace in the address: the project's columns come back.
  const again = await open(context, '/?view=runs');
  await again.page.waitForSelector('tr[data-run-id]');
  await waitUntil('the saved columns', async () => (await again.page.locator(`td[data-col="${lrKey}"]`).count()) === 3, 10_000);
  await context.close();
});

it('Compare: the parallel-coordinates panel draws a line per run through the differing config keys to the validation score', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const { page, problems } = await open(context, `/?view=compare&runs=${ids.join(',')}`);
  await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
  const panel = page.locator('[data-testid="parallel-panel"]');
  await panel.waitFor({ timeout: 20_000 });
  await panel.scrollIntoViewIfNeeded();
  await waitUntil(
    'the parallel chart to draw',
    async () => (await panel.locator('[data-testid="parallel-chart"]').getAttribute('data-rendered')) === 'true',
    20_000,
  );
  expect(await panel.getAttribute('data-lines')).toBe('3');
  const axes = (await panel.getAttribute('data-axes'))!.split(',');
  expect(axes.some((a) => a.endsWith('optim.lr'))).toBe(true);
  expect(axes.some((a) => a.endsWith('adv_estimator'))).toBe(true);
  expect(axes[axes.length - 1]).toBe('val/score_mean');
  // Untick the learning rate: the axes follow, and the choice goes into the address.
  await page.click('[data-testid="parallel-axes"] summary');
  await page.locator('[data-testid="parallel-axes"] input[data-key$="optim.lr"]').uncheck();
  await waitUntil('the axis to go', async () => !(await panel.getAttribute('data-axes'))!.includes('optim.lr'), 10_000);
  await waitUntil('the address to keep it', async () => new URL(page.url()).searchParams.get('pc') !== null, 10_000);
  await page.locator('[data-testid="parallel-axes"] input[data-key$="optim.lr"]').check();
  // Closed again (a <details> menu stays open until its summary is clicked), so the screenshots show the chart.
  await page.click('[data-testid="parallel-axes"] summary');
  expect(await page.locator('[data-testid="parallel-axes"]').getAttribute('open')).toBeNull();
  for (const dark of [false, true]) {
    await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
    await panel.scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await screenshot(page, `ui-workspace-parallel-${dark ? 'dark' : 'light'}`);
  }
  const doc = await page
    .locator('body')
    .evaluate(() => ({ page: document.documentElement.clientWidth, doc: document.documentElement.scrollWidth }));
  expect(doc.doc, JSON.stringify(doc)).toBeLessThanOrEqual(doc.page);
  expect(problems).toEqual([]);
  await context.close();
});
