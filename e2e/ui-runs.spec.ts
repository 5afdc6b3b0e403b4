/**
 * A researcher's day in the lab, against the real backend (store, sessions, trainer, bundles):
 * start a SAMPO run on a tiny config from the New run view and watch its metrics stream into the run detail,
 * reopen it from the Runs table with the keyboard, start a GRPO run, compare the two (summary, verdicts,
 * config diff), export a bundle, download it and import it back, rename and delete with confirmation.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLabSession, screenshot, type LabSession } from './support/browser';
import { type Lab } from './support/lab';
import { TINY, field, gotoView, setField, startCustomRun, waitUntil } from './uiHelpers';

let lab: Lab;
let app: LabSession;
let page: Page;
let sampoId = '';
let grpoId = '';
let bundleBytes: Buffer | null = null;
let bundleName = '';

/** A run has finished when its detail shows a terminal status. */
const RUN_TIMEOUT_MS = 600_000;

beforeAll(async () => {
  app = await openLabSession();
  ({ lab, page } = app);
});

afterAll(async () => {
  await app?.close();
});

async function waitForStatus(runId: string, statuses: string[], timeout = RUN_TIMEOUT_MS): Promise<string> {
  const t0 = Date.now();
  for (;;) {
    const r = await lab.call('runs.get', { runId });
    if (r.ok && statuses.includes(r.value.status)) return r.value.status;
    if (r.ok && r.value.status === 'failed') throw new Error(`run ${runId} failed: ${r.value.error}`);
    if (Date.now() - t0 > timeout)
      throw new Error(
        `run ${runId} did not reach ${statuses.join('/')} in ${timeout / 1000} s (last: ${r.ok ? r.value.status : r.error.message})`,
      );
    await new Promise((res) => setTimeout(res, 1000));
  }
}

describe('runs, live metrics, compare and bundles', () => {
  it('shows SAMPO first and recommended, with its why and four dimensions', async () => {
    await gotoView(page, 'new');
    const first = page.locator('[data-preset]').first();
    expect(await first.getAttribute('data-preset')).toBe('sampo');
    expect(await first.locator('.recommended').innerText()).toMatch(/recommended/i);
    const text = await first.innerText();
    for (const dim of ['Aggregation', 'Clipping', 'Advantage', 'Filtering']) expect(text).toContain(dim);
    expect(await page.locator('[data-preset]').count()).toBeGreaterThanOrEqual(5);
    await screenshot(page, 'ui-new-run-presets');
  });

  it("validates a customised field inline with the backend's message", async () => {
    await page.locator('[data-preset="sampo"] button', { hasText: 'Customise' }).click();
    await page.waitForSelector('[data-testid="config-editor"]');
    await setField(page, 'algorithm.kl.coef', '-1');
    const err = page.locator('.field.bad .err').first();
    await err.waitFor({ timeout: 15_000 });
    expect((await err.innerText()).length).toBeGreaterThan(5);
    expect(await page.locator('[data-testid="start-custom"]').isDisabled()).toBe(true);
    await screenshot(page, 'ui-new-run-validation');
    await setField(page, 'algorithm.kl.coef', '0.02');
    await page.waitForSelector('.field.bad', { state: 'detached', timeout: 15_000 });
    expect(await field(page, 'algorithm.kl.coef').inputValue()).toBe('0.02');
  });

  it(
    'starts a tiny SAMPO run with one click and streams its metrics into the run detail',
    async () => {
      sampoId = await startCustomRun(page, { preset: 'sampo', env: 'sokoban', name: 'e2e sampo tiny', overrides: TINY });
      expect(new URL(page.url()).searchParams.get('id')).toBe(sampoId);
      // Points arrive through run.metrics events while the page stays open (no reload).
      const success = page.locator('.chart-card[data-metric="episode/success_rate"]');
      await waitUntil(
        'the first success-rate point to stream in',
        async () => Number(await success.getAttribute('data-points')) >= 1,
        RUN_TIMEOUT_MS,
      );
      expect(Number(await success.getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
      await screenshot(page, 'ui-run-detail-live');
      await waitForStatus(sampoId, ['completed']);
      await waitUntil(
        'the detail to show step 3 / 3',
        async () => (await page.locator('[data-testid="run-step"]').innerText()).includes('step 3 / 3'),
        30_000,
      );
      expect(Number(await success.getAttribute('data-points'))).toBe(3);
      // Validation success (training.validateEvery = 0: once, at the end, on 4 held-out tasks) beside the random
      // and expert baselines on the same tasks; a scratch warm start has no shipped numbers.
      await waitUntil('the validation success', async () => (await page.locator('[data-testid="run-val-success"]').count()) === 1, 30_000);
      expect(await page.locator('[data-testid="run-val-success"]').innerText()).toMatch(/^validation \d+\.\d % .*on 4 tasks/);
      const baselines = page.locator('[data-testid="run-baselines"]');
      await baselines.waitFor({ timeout: 60_000 });
      const line = await baselines.innerText();
      expect(line).toMatch(/random \d+\.\d % \[\d+\.\d–\d+\.\d\]/);
      expect(line).toMatch(/expert \d+\.\d % \[/);
      expect(line).not.toContain('warm start');
      const want = await lab.call('runs.baselines', { runId: sampoId });
      expect(want.ok).toBe(true);
      if (want.ok) {
        expect(want.value.episodes).toBe(4);
        expect(line).toContain(`random ${(100 * want.value.random.rate).toFixed(1)} %`);
        expect(line).toContain(`expert ${(100 * want.value.expert.rate).toFixed(1)} %`);
      }
      await screenshot(page, 'ui-run-detail-baselines');
    },
    RUN_TIMEOUT_MS + 60_000,
  );

  it('reopens the run from the Runs table with the keyboard and steps through a sampled episode', async () => {
    await gotoView(page, 'runs');
    const row = page.locator(`tr[data-run-id="${sampoId}"]`);
    await row.waitFor();
    expect(await row.innerText()).toContain('e2e sampo tiny');
    await row.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${sampoId}"]`);
    const viewer = page.locator('[data-testid="trajectory-viewer"]');
    await viewer.locator('pre').first().waitFor({ timeout: 30_000 });
    const before = await viewer.innerText();
    expect(before).toMatch(/turn 1 \//);
    const next = viewer.locator('button[aria-label="Next turn"]');
    if (await next.isEnabled()) {
      await next.click();
      expect(await viewer.innerText()).toMatch(/turn 2 \//);
    }
    await screenshot(page, 'ui-run-detail');
  });

  it(
    'compares the SAMPO run with a GRPO run: summary, verdicts and config diff',
    async () => {
      grpoId = await startCustomRun(page, { preset: 'grpo', env: 'sokoban', name: 'e2e grpo tiny', overrides: TINY });
      await waitForStatus(grpoId, ['completed']);
      await gotoView(page, 'runs');
      for (const id of [sampoId, grpoId]) await page.locator(`tr[data-run-id="${id}"] input[type="checkbox"]`).check();
      await page.click('[data-testid="compare-selected"]');
      await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
      const summary = await page.locator('[data-testid="summary-table"]').innerText();
      expect(summary).toContain('e2e sampo tiny');
      expect(summary).toContain('e2e grpo tiny');
      expect(await page.locator('[data-testid="summary-table"] [data-verdict]').count()).toBe(2);
      const randomCells = page.locator('[data-testid="summary-table"] td[data-col="random"]');
      await waitUntil(
        'random baselines in the summary table',
        async () => {
          const texts = await randomCells.allInnerTexts();
          return texts.length === 2 && texts.every((t) => /^\d+\.\d % \[\d+\.\d–\d+\.\d\]$/.test(t));
        },
        60_000,
      );
      const expert = await page.locator('[data-testid="summary-table"] td[data-col="expert"]').allInnerTexts();
      expect(expert).toHaveLength(2);
      for (const t of expert) expect(t).toMatch(/^\d+\.\d %$/);
      const diff = page.locator('[data-testid="config-diff"]');
      // textContent, not innerText: the table may sit below the first screen (the parallel-coordinates panel comes
      // first), where the layout skips it and innerText reads ''; the charts below must stay undrawn for the check after.
      const diffText = (await diff.textContent()) ?? '';
      expect(diffText).toContain('preset');
      expect(diffText).toContain('algorithm.policyLoss.mode');
      const onlyDiffRows = await diff.locator('tbody tr').count();
      await screenshot(page, 'ui-compare');
      // Charts below the first screen are skipped by layout (content-visibility) and draw once scrolled to.
      const lastChart = page.locator('.chart-card[data-metric]').last(); // the last metric panel (the scatter panel follows them)
      expect(await lastChart.locator('.chart[data-rendered="true"]').count()).toBe(0);
      // Until a chart draws, its card shows the chart's title; drawn charts show only the canvas.
      expect(await lastChart.locator('.placeholder').innerText()).toMatch(/\S.*drawing…/);
      expect(await page.locator('.chart[data-rendered="true"] .placeholder').count()).toBe(0);
      await lastChart.scrollIntoViewIfNeeded();
      await waitUntil(
        'the last chart to draw once scrolled to',
        async () => (await lastChart.locator('.chart[data-rendered="true"]').count()) === 1,
        30_000,
        100,
      );
      expect(await lastChart.locator('.placeholder').count()).toBe(0);
      await page.locator('label', { hasText: 'differences only' }).locator('input').uncheck();
      expect(await diff.locator('tbody tr').count()).toBeGreaterThan(onlyDiffRows);
      await page.selectOption('select[aria-label="Group by"]', 'preset');
      // The charts redraw in the chart worker: wait until every drawn chart has drawn its grouped input.
      await waitUntil(
        'the grouped charts to be drawn',
        async () =>
          (await page.locator('.chart-card .chart[data-drawn="true"][data-rendered="true"][data-pending="false"]').count()) > 0 &&
          (await page.locator('.chart-card .chart[data-pending="true"]').count()) === 0,
        30_000,
        100,
      );
      await screenshot(page, 'ui-compare-grouped');
    },
    RUN_TIMEOUT_MS + 120_000,
  );

  it('exports a bundle with a download link', async () => {
    await page.goto(`${lab.origin}/?view=run&id=${sampoId}#token=${lab.token}`);
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${sampoId}"]`);
    await page.click('[data-testid="export-bundle"]');
    const result = page.locator('[data-testid="export-result"]');
    await result.waitFor({ timeout: 60_000 });
    const [download] = await Promise.all([page.waitForEvent('download'), result.locator('a', { hasText: 'Download' }).click()]);
    bundleName = download.suggestedFilename();
    bundleBytes = readFileSync(await download.path());
    expect(bundleBytes.length).toBeGreaterThan(100);
    await screenshot(page, 'ui-export');
  });

  it('imports the bundle back from the Runs view', async () => {
    expect(bundleBytes).not.toBeNull();
    await gotoView(page, 'runs');
    const before = await page.locator('tbody tr[data-run-id]').count();
    await page.setInputFiles('[data-testid="import-input"]', { name: bundleName, mimeType: 'application/zip', buffer: bundleBytes! });
    // The run the bundle holds is still in this lab: the import says so and makes a copy only on request.
    const again = page.locator('[data-testid="import-again"]').last();
    await again.waitFor({ timeout: 60_000 });
    await again.click();
    await waitUntil(
      'the imported run to appear in the table',
      async () => (await page.locator('tbody tr[data-run-id]').count()) === before + 1,
      60_000,
    );
    await screenshot(page, 'ui-runs-after-import');
  });

  it('renames and deletes a run, asking for confirmation first', async () => {
    const rows = page.locator('tbody tr[data-run-id]');
    const ids = await rows.evaluateAll((els: { getAttribute(n: string): string | null }[]) =>
      els.map((e) => e.getAttribute('data-run-id')),
    );
    const imported = ids.find((id) => id !== sampoId && id !== grpoId);
    expect(imported).toBeTruthy();
    const row = page.locator(`tr[data-run-id="${imported}"]`);
    await row.locator('button', { hasText: 'Rename' }).click();
    await page.locator('dialog[open] input[name="value"]').fill('imported copy');
    await page.locator('dialog[open] button[type="submit"]').click();
    await waitUntil('the new name in the table', async () => (await row.innerText()).includes('imported copy'), 15_000);
    await row.locator('button', { hasText: 'Delete' }).click();
    const dialog = page.locator('dialog[open]');
    expect(await dialog.innerText()).toContain('imported copy');
    await dialog.locator('button', { hasText: 'Cancel' }).click();
    expect(await row.count()).toBe(1);
    await row.locator('button', { hasText: 'Delete' }).click();
    await page.locator('dialog[open] button', { hasText: 'Delete' }).click();
    await row.waitFor({ state: 'detached', timeout: 15_000 });
    const gone = await lab.call('runs.get', { runId: imported! });
    expect(gone.ok).toBe(false);
  });

  it('ran without CSP violations or uncaught page errors', () => {
    expect(app.problems).toEqual([]);
  });
});
