/**
 * Compare on imported verl runs, as a researcher who reads them in W&B every day would:
 * - every key any compared run logged is in Compare's metric picker, grouped by namespace, found by a substring
 *   ("explained" → critic/vf_explained_var) or a regular expression (`^timing_s/`), and charted with data;
 * - the summary table has the runs' headline numbers (Final / Best from the task score, Validation from
 *   val/score_mean, which verl's val-core/…/mean@1 maps to), and the runs table has them too;
 * - the default panels are chosen from what the runs logged: the validation score first, never the constant KL
 *   coefficient or an LR logged as 0;
 * - a panel none of the runs has data for says "No data in these runs".
 * On the shared real logs (two verl Qwen2-7B console logs) where ../shared/data/real-runs is present; otherwise
 * on two small verl console logs written here in the same format. Screenshots (light and dark):
 * test-results/ui-compare-imported-*.png.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realRun } from '../tests/support/realRuns';
import { openApp, screenshot, startSpecLab, type AppPage, type SpecLab } from './support/browser';
import { importLogs, importRuns, ROOT, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

const REAL = [realRun('verl-console/play-verl_verl_qwen2_7b_min.log'), realRun('verl-console/play-verl_verl_qwen2_7b_recommended.log')];
const onReal = REAL.every((p) => p !== null);

/** A verl console log in the format verl prints (one `step:N - key:value …` line per step), validation every 5 steps. */
function verlLog(steps: number, seed: number): string {
  const lines = ['(main_task pid=1) {"actor_rollout_ref": {"actor": {"optim": {"lr": 1e-06}}}, "algorithm": {"adv_estimator": "gae"}}'];
  for (let s = 1; s <= steps; s++) {
    const score = Math.min(0.95, 0.2 + (0.7 * s) / steps + 0.01 * seed);
    const kv: [string, number][] = [
      ['actor/entropy_loss', 0.3 - 0.01 * s],
      ['actor/pg_loss', 0.02 * Math.sin(s + seed)],
      ['actor/kl_coef', 0.001],
      ['actor/lr', 0],
      ['actor/grad_norm', 2 + ((s * 7 + seed) % 5) / 3],
      ['critic/score/mean', score],
      ['critic/vf_loss', 1 / s],
      ['critic/vf_explained_var', -5 + 0.2 * s],
      ['response_length/mean', 150 + 3 * s],
      ['timing_s/gen', 30 + (s % 4)],
      ['timing_s/update_actor', 12 + (s % 3)],
      ['perf/mfu/actor', 0.3 + 0.001 * s],
    ];
    if (s % 5 === 0) kv.push(['val-core/openai/gsm8k/reward/mean@1', Math.min(0.9, score - 0.05)]);
    lines.push(`(main_task pid=1) step:${s} - ${kv.map(([k, v]) => `${k}:${v.toFixed(4)}`).join(' - ')}`);
  }
  return `${lines.join('\n')}\n`;
}

let spec: SpecLab | undefined;
let lab: Lab;
let browser: Browser;
let ids: string[] = [];

beforeAll(async () => {
  spec = await startSpecLab('arlarena-compare-imported-e2e-', (work, dataDir) => {
    ids = onReal
      ? importRuns(dataDir, REAL as string[])
      : importLogs(
          work,
          dataDir,
          [1, 2].map((seed) => [`verl-fixture-${seed}.log`, verlLog(20 + seed * 5, seed)]),
        );
    expect(ids).toHaveLength(2);
  });
  ({ lab, browser } = spec);
});

afterAll(() => spec?.close());

async function open(path: string): Promise<AppPage> {
  const app = await openApp(browser, lab, path);
  await app.page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
  return app;
}

async function openCompare(): Promise<{ page: Page; problems: string[] }> {
  const o = await open(`/?view=compare&runs=${ids.join(',')}`);
  await o.page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
  return o;
}

const chartKeys = (page: Page) =>
  page.locator('[data-testid="compare"] .chart-card').evaluateAll((els) => els.map((e) => e.getAttribute('data-metric') ?? ''));

describe(`Compare on two imported verl runs (${onReal ? 'the shared real verl Qwen2-7B console logs' : 'NOT the shared real logs (../shared/data/real-runs is absent): two verl console logs written by the test'})`, () => {
  it('lists every logged key, grouped by namespace, searchable by substring and regex, and charts one the catalog lacks', async () => {
    const { page, problems } = await openCompare();
    await page.click('[data-testid="metric-picker-toggle"]');
    const picker = page.locator('[data-testid="metric-picker"]');
    await waitUntil(
      'the logged keys in the picker',
      async () => (await picker.locator('input[data-key="critic/vf_explained_var"]').count()) === 1,
      20_000,
    );
    // Grouped by namespace, the runs' own namespaces included.
    for (const ns of ['critic', 'timing_s', 'actor'])
      expect(await picker.locator(`[data-testid="metric-group"][data-ns="${ns}"]`).count()).toBe(1);
    const search = page.locator('[data-testid="metric-search"]');
    await search.fill('explained');
    expect(await picker.locator('input[data-key]').evaluateAll((els) => els.map((e) => e.getAttribute('data-key')))).toEqual([
      'critic/vf_explained_var',
    ]);
    await search.fill('^timing_s/');
    const timing = await picker.locator('input[data-key]').evaluateAll((els) => els.map((e) => e.getAttribute('data-key') ?? ''));
    expect(timing.length).toBeGreaterThan(1);
    expect(timing.every((k) => k.startsWith('timing_s/'))).toBe(true);
    // Chart the explained variance: a chart with a line per run and no "no data" note.
    await search.fill('explained');
    await picker.locator('input[data-key="critic/vf_explained_var"]').check();
    const card = page.locator('[data-testid="compare"] .chart-card[data-metric="critic/vf_explained_var"]');
    await card.waitFor({ timeout: 20_000 });
    // Charts below the first screen draw when scrolled to.
    await card.scrollIntoViewIfNeeded();
    await waitUntil(
      'the explained-variance chart to draw',
      async () =>
        (await card.locator('.chart').getAttribute('data-rendered')) === 'true' &&
        (await page.locator('[data-testid="compare-loading"]').count()) === 0,
      30_000,
    );
    expect(await card.getAttribute('data-empty')).toBeNull();
    for (const dark of [false, true]) {
      await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, `ui-compare-imported-any-key-${dark ? 'dark' : 'light'}`);
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('shows headline numbers from what the runs logged and opens on panels with data', async () => {
    const { page, problems } = await openCompare();
    const rows = page.locator('[data-testid="summary-table"] tbody tr');
    expect(await rows.count()).toBe(2);
    for (let i = 0; i < 2; i++) {
      for (const col of ['final', 'best', 'validation']) {
        const text = (await rows.nth(i).locator(`td[data-col="${col}"]`).innerText()).trim();
        expect(text, `${col} of run ${i}`).toMatch(/^\d+(\.\d)? %/);
      }
    }
    if (onReal) {
      // play-verl_verl_qwen2_7b_min.log: the last val-core/openai/gsm8k/reward/mean@1 is 0.821 (as `show` prints), the last score 0.93.
      const minRow = rows.filter({ hasText: 'qwen2_7b_min' });
      expect((await minRow.locator('td[data-col="validation"]').innerText()).trim()).toMatch(/^82\.1 %/);
      expect((await minRow.locator('td[data-col="final"]').innerText()).trim()).toBe('93.0 %');
    }
    const keys = await chartKeys(page);
    expect(keys[0]).toBe('val/score_mean');
    expect(keys).toContain('episode/score_mean');
    // Config echoes are no panels: a constant KL coefficient, an LR printed as 0.
    expect(keys).not.toContain('actor/kl_coef');
    expect(keys).not.toContain('actor/lr');
    expect(await page.locator('[data-testid="compare"] .chart-card[data-empty="true"]').count()).toBe(0);
    for (const dark of [false, true]) {
      await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
      await screenshot(page, `ui-compare-imported-defaults-${dark ? 'dark' : 'light'}`);
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('says "No data in these runs" on a panel none of them logged', async () => {
    // The lab's success rate: no verl run logs it (charted through a Compare link naming it).
    const { page, problems } = await open(`/?view=compare&runs=${ids.join(',')}&metrics=episode/success_rate,episode/score_mean`);
    await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
    const empty = page.locator('[data-testid="compare"] .chart-card[data-metric="episode/success_rate"]');
    await waitUntil('the empty panel note', async () => (await empty.getAttribute('data-empty')) === 'true', 20_000);
    expect(await empty.locator('[data-testid="no-data"]').innerText()).toMatch(/No data in these runs/);
    expect(
      await page.locator('[data-testid="compare"] .chart-card[data-metric="episode/score_mean"]').getAttribute('data-empty'),
    ).toBeNull();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('the runs table shows the validation and training headline of each imported run, and its seed as unknown', async () => {
    const { page, problems } = await open('/?view=runs');
    for (const id of ids) {
      const row = page.locator(`tr[data-run-id="${id}"]`);
      await row.waitFor({ timeout: 20_000 });
      expect((await row.locator('td[data-col="validation"]').innerText()).trim()).toMatch(/^\d+(\.\d)? %/);
      expect((await row.locator('td[data-col="train-success"]').innerText()).trim()).toMatch(/^\d+(\.\d)? %/);
      // These logs name no seed: "unknown", as the run view says, not the 0 the record stores.
      expect((await row.locator('td[data-col="seed"]').innerText()).trim()).toBe('unknown');
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('a Compare link reopens the same workspace', () => {
  it('keeps charts, x-axis and hidden runs in the address (smoothing and grouping: compareWorkspace.test.ts)', async () => {
    const { page, problems } = await openCompare();
    await page.locator('[data-testid="metric-picker-toggle"]').click();
    await page.locator('[data-testid="metric-search"]').fill('explained');
    await page.locator('input[data-key="critic/vf_explained_var"]').check();
    await page.selectOption('select[aria-label="x-axis"]', 'wall');
    await page.locator(`[data-testid="compare-legend"] button[data-key="${ids[1]}"]`).click();
    await waitUntil(
      'the address to hold the workspace',
      async () => {
        const u = new URL(page.url());
        return (
          (u.searchParams.get('metrics') ?? '').includes('critic/vf_explained_var') &&
          u.searchParams.get('x') === 'wall' &&
          u.searchParams.get('hide') === ids[1]
        );
      },
      20_000,
    );
    const link = page.url();
    const charted = await chartKeys(page);
    await page.context().close();

    // Another browser profile (nothing remembered) opens the link: the same view.
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const again = await context.newPage();
    again.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await again.goto(link, { waitUntil: 'load' });
    await again.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
    expect(await chartKeys(again)).toEqual(charted);
    expect(await again.locator('select[aria-label="x-axis"]').inputValue()).toBe('wall');
    expect(await again.locator(`[data-testid="compare-legend"] button[data-key="${ids[1]}"]`).getAttribute('aria-pressed')).toBe('false');
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('Compare with… from a run page', () => {
  it('finds the run to compare with by a search (its short id here) and compares the two', async () => {
    const { page, problems } = await open(`/?view=run&id=${ids[0]}`);
    await page.locator('button', { hasText: 'Compare with…' }).click();
    const picker = page.locator('[data-testid="compare-picker"]');
    await picker.waitFor({ timeout: 20_000 });
    await picker.locator('[data-testid="compare-run-search"]').fill(ids[1].slice(-6));
    // The run already ticked stays; the search leaves only the match besides it.
    await waitUntil('the search to narrow the list', async () => (await picker.locator('.pick-grid label').count()) === 2, 10_000);
    await picker.locator('[data-testid="compare-run-search"]').fill('no-such-run-xyz');
    expect(await picker.locator('.pick-grid label').count()).toBe(1);
    await picker.locator('[data-testid="compare-run-search"]').fill(ids[1].slice(-6));
    // Clicked, not check()ed: with two runs ticked the picker closes at once.
    await picker
      .locator('.pick-grid label')
      .filter({ hasNot: page.locator('input:checked') })
      .locator('input')
      .click();
    await waitUntil(
      'both runs in the summary',
      async () => (await page.locator('[data-testid="summary-table"] tbody tr').count()) === 2,
      30_000,
    );
    expect(new URL(page.url()).searchParams.get('runs')).toBe(ids.join(','));
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('the runs table filters with a query', () => {
  it('keeps the runs a query names (a headline number, a run field), adds any headline number as a sortable column, and says what it cannot read', async () => {
    const { page, problems } = await open('/?view=runs');
    const search = page.locator('[data-testid="runs-search"]');
    await page.locator('tr[data-run-id]').first().waitFor({ timeout: 20_000 });
    const rows = page.locator('tr[data-run-id]');
    expect(await rows.count()).toBe(2);
    // Only the run with the higher last validation score passes a >= on that score.
    const recs = await lab.call('runs.getMany', { runIds: ids });
    if (!recs.ok) throw new Error(recs.error.message);
    const vals = recs.value.runs.map((r) => r.summary['val/score_mean'] ?? 0);
    const hi = Math.max(...vals);
    await search.fill(`kind = imported and val/score_mean >= ${hi}`);
    await waitUntil('the query to leave one run', async () => (await rows.count()) === 1, 10_000);
    expect(await rows.first().getAttribute('data-run-id')).toBe(recs.value.runs[vals.indexOf(hi)].id);
    // Any headline number as a column, sortable: the last validation score, which no named column shows.
    await search.fill('');
    await page.locator('[data-testid="runs-columns"] summary').click();
    await page.locator('[data-testid="runs-columns"] input[data-key="val/score_mean"]').check();
    const cells = page.locator('td[data-col="summary:val/score_mean"]');
    await waitUntil('the new column', async () => (await cells.count()) === 2, 10_000);
    await page.locator('th button', { hasText: 'val/score_mean' }).click();
    const shownVals = (await cells.allInnerTexts()).map(Number);
    const asc = [...vals].map((v) => Number(v.toPrecision(3))).sort((a, b) => a - b);
    // Sorted by that column (numbers sort high first on the first click).
    expect([asc, [...asc].reverse()]).toContainEqual(shownVals);
    await search.fill('val/score_mean > high');
    await page.locator('[data-testid="runs-query-error"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('[data-testid="runs-query-error"]').innerText()).toMatch(/compares numbers/);
    for (const dark of [false, true]) {
      await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
      await screenshot(page, `ui-runs-query-error-${dark ? 'dark' : 'light'}`);
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('scatter panel', () => {
  it('draws one point per run at two headline numbers, chosen from what the runs carry', async () => {
    const { page, problems } = await openCompare();
    const panel = page.locator('[data-testid="scatter-panel"]');
    await panel.waitFor({ timeout: 20_000 });
    await page.selectOption('select[aria-label="Scatter x"]', 'episode/score_mean');
    await page.selectOption('select[aria-label="Scatter y"]', 'val/score_mean');
    await panel.scrollIntoViewIfNeeded();
    await waitUntil('the scatter to draw', async () => (await panel.locator('.chart').getAttribute('data-rendered')) === 'true', 20_000);
    expect(await panel.getAttribute('data-points')).toBe('2');
    expect(await page.locator('[data-testid="scatter-missing"]').count()).toBe(0);
    for (const dark of [false, true]) {
      await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
      await panel.screenshot({ path: join(ROOT, 'test-results', `ui-compare-imported-scatter-${dark ? 'dark' : 'light'}.png`) });
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('x-axis by a logged key', () => {
  it('charts against a counter the runs logged (training/epoch) and keeps it in the address', async () => {
    const { page, problems } = await openCompare();
    const xs = page.locator('select[aria-label="x-axis"]');
    const options = await xs.locator('option').evaluateAll((els) => els.map((e) => e.getAttribute('value') ?? ''));
    const epoch = options.find((v) => v.startsWith('key:') && v.includes('epoch'));
    if (!onReal) {
      // The written fixture logs no epoch counter: nothing to offer beyond step, wall time and tokens.
      expect(options.filter((v) => v.startsWith('key:'))).toEqual([]);
      await page.context().close();
      return;
    }
    expect(epoch).toBe('key:training/epoch');
    await xs.selectOption(epoch!);
    const first = page.locator('[data-testid="compare"] .chart-card').first();
    await waitUntil(
      'the charts against epochs',
      async () =>
        (await page.locator('[data-testid="compare-loading"]').count()) === 0 &&
        (await first.locator('.chart').getAttribute('data-rendered')) === 'true',
      20_000,
    );
    await waitUntil('the address', async () => new URL(page.url()).searchParams.get('xkey') === 'training/epoch', 10_000);
    await first.screenshot({ path: join(ROOT, 'test-results', 'ui-compare-imported-x-epoch-light.png') });
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('saved workspace', () => {
  it('Compare reopened on the same runs without a link comes back as it was left (this browser)', async () => {
    const { page, problems } = await openCompare();
    await page.selectOption('select[aria-label="x-axis"]', 'wall');
    await page.locator(`[data-testid="compare-legend"] button[data-key="${ids[0]}"]`).click();
    await waitUntil('the workspace in the address', async () => new URL(page.url()).searchParams.get('hide') === ids[0], 10_000);
    // The runs in the other order, no workspace in the address: what was left is restored.
    await page.goto(`${lab.origin}/?view=compare&runs=${[...ids].reverse().join(',')}#token=${lab.token}`, { waitUntil: 'load' });
    await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
    expect(await page.locator('select[aria-label="x-axis"]').inputValue()).toBe('wall');
    expect(await page.locator(`[data-testid="compare-legend"] button[data-key="${ids[0]}"]`).getAttribute('aria-pressed')).toBe('false');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
