/**
 * Alert marks, evidence windows, zoom to an alert's step and the metric picker, on two synthetic
 * CISPO collapse runs (eight alerts each over seven metrics, stored by `arlarena check --save`):
 * - a run chart marks only the alerts on its own metric; "show all alerts" marks every alert on every chart;
 * - the stored alerts carry the peak their message cites (inside the evidence window) and the threshold;
 * - an alert's step link (the run page's own list, and the Alerts view) zooms every run chart to a window around
 *   the step, the route follows, and a reset zoom stays reset through later redraws;
 * - the metric picker (run page and Compare) searches, groups by namespace, and is remembered per view.
 * Screenshots (light and dark): test-results/ui-marks-{run,zoomed,evidence,compare,picker}-{light,dark}.png.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLabSession, screenshot, type LabSession } from './support/browser';
import { checkRun, synthRun, type Lab } from './support/lab';
import { gotoView, waitUntil } from './uiHelpers';

let work = '';
let lab: Lab;
let app: LabSession;
let page: Page;
const ids: string[] = [];

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-marks-e2e-'));
  const dataDir = join(work, 'data');
  for (const seed of [1, 2]) {
    const id = synthRun(dataDir, { steps: 200, shape: 'cispo_collapse', seed, name: `marks seed ${seed}` });
    ids.push(id);
    checkRun(dataDir, id);
  }
  app = await openLabSession({ dataDir });
  ({ lab, page } = app);
});

afterAll(async () => {
  await app?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

type StoredAlert = {
  id: string;
  runId: string;
  rule: string;
  metric: string;
  firstStep: number;
  lastStep: number;
  evidence: { steps: number[] };
  peak?: { step: number; value: number };
  threshold?: number;
};

async function alertsOf(runId: string): Promise<StoredAlert[]> {
  const res = await lab.call('alerts.list', {});
  if (!res.ok) throw new Error(`alerts.list failed: ${JSON.stringify(res)}`);
  return (res.value as StoredAlert[]).filter((a) => a.runId === runId);
}

/** Opens an address of the app in the same page (its storage kept), with the token. */
async function open(path: string): Promise<void> {
  await page.goto(`${lab.origin}${path}#token=${lab.token}`, { waitUntil: 'load' });
}

const attr = async (l: Locator, name: string) => (await l.getAttribute(name)) ?? '';
const card = (metric: string) => page.locator(`.charts .chart-card[data-metric="${metric}"]`);

/** Every chart in `scope` has drawn its latest input. */
async function settled(scope: string): Promise<void> {
  await waitUntil(
    'the charts to draw',
    async () => {
      const charts = page.locator(`${scope} .chart[data-drawn="true"]`);
      const n = await charts.count();
      if (n === 0) return false;
      for (let i = 0; i < n; i++) {
        const c = charts.nth(i);
        if ((await attr(c, 'data-rendered')) !== 'true' || (await attr(c, 'data-pending')) === 'true') return false;
      }
      return true;
    },
    30_000,
    100,
  );
}

async function shoot(name: string, scope: string): Promise<void> {
  // Charts below the first screen draw once scrolled near: page down through them, then back to the top (a full
  // page screenshot taken while scrolled shows the sticky header mid-page).
  const scrollTo = (y: number) =>
    page.evaluate((to) => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, to), y);
  for (let y = 0; y <= 4000; y += 500) {
    await scrollTo(y);
    await page.waitForTimeout(50);
  }
  await settled(scope);
  await scrollTo(0);
  for (const dark of [false, true]) {
    await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
    await page.waitForTimeout(300);
    await settled(scope);
    await screenshot(page, `ui-marks-${name}-${dark ? 'dark' : 'light'}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

describe('alert marks, evidence and zoom to step', () => {
  it("stores each alert's cited peak inside its evidence window, with the threshold", async () => {
    const alerts = await alertsOf(ids[0]);
    expect(alerts.length).toBeGreaterThanOrEqual(6);
    const cited = alerts.filter((a) => a.peak !== undefined);
    expect(cited.length).toBe(alerts.length);
    for (const a of cited) {
      expect(a.evidence.steps, `${a.rule} on ${a.metric}`).toContain(a.peak!.step);
      expect(typeof a.threshold).toBe('number');
    }
  });

  it("marks on each run chart only the alerts on that chart's metric, and all of them with the toggle", async () => {
    const alerts = await alertsOf(ids[0]);
    await open(`/?view=run&id=${ids[0]}`);
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${ids[0]}"]`);
    await waitUntil('the grad-norm chart to load', async () => Number(await attr(card('actor/grad_norm'), 'data-points')) > 0, 30_000, 100);
    for (const metric of ['actor/grad_norm', 'episode/success_rate', 'actor/entropy']) {
      expect(Number(await attr(card(metric), 'data-alert-marks')), metric).toBe(alerts.filter((a) => a.metric === metric).length);
    }
    expect(Number(await attr(card('actor/entropy'), 'data-alert-marks'))).toBe(0);
    await settled('.charts');
    await shoot('run', '.charts');
    await page.check('[data-testid="run-all-alerts"]');
    await waitUntil(
      'every chart to mark every alert',
      async () => (await attr(card('actor/entropy'), 'data-alert-marks')) === String(alerts.length),
      10_000,
      100,
    );
    expect(await attr(card('actor/grad_norm'), 'data-alert-marks')).toBe(String(alerts.length));
    await page.uncheck('[data-testid="run-all-alerts"]');
    await waitUntil(
      'the marks back on their own charts',
      async () => (await attr(card('actor/entropy'), 'data-alert-marks')) === '0',
      10_000,
      100,
    );
  });

  it("zooms every run chart around the step from the run page's alert link; a reset stays reset", async () => {
    const alert = (await alertsOf(ids[0])).find((a) => a.metric === 'actor/grad_norm')!;
    const link = page.locator('[data-testid="run-alert-step"]', { hasText: `step ${alert.firstStep}` }).first();
    await link.click();
    const chart = card('actor/grad_norm').locator('.chart');
    await waitUntil('the grad-norm chart to zoom', async () => (await attr(chart, 'data-zoomed')) === 'true', 15_000, 100);
    // ±10 % of the 200-step run around the step.
    const from = Number(await attr(chart, 'data-x-from'));
    const to = Number(await attr(chart, 'data-x-to'));
    expect(Math.abs(from - (alert.firstStep - 20))).toBeLessThanOrEqual(1);
    expect(Math.abs(to - (alert.firstStep + 20))).toBeLessThanOrEqual(1);
    await waitUntil(
      'another chart to zoom too',
      async () => (await attr(card('episode/success_rate').locator('.chart'), 'data-zoomed')) === 'true',
      15_000,
      100,
    );
    expect(await attr(card('actor/grad_norm'), 'data-focused')).toBe('true');
    expect(await page.locator('[data-testid="run-focus-note"]').innerText()).toContain(`step ${alert.firstStep}`);
    expect(page.url()).toContain(`metric=${encodeURIComponent('actor/grad_norm')}&step=${alert.firstStep}`);
    await settled('.charts');
    await shoot('zoomed', '.charts');

    await card('actor/grad_norm').locator('[data-testid="chart-reset-zoom"]').click();
    await waitUntil('the zoom to reset', async () => (await attr(chart, 'data-zoomed')) === 'false', 10_000, 100);
    // A redraw (new input: every alert marked) keeps the reset: the link's zoom was applied once.
    await page.check('[data-testid="run-all-alerts"]');
    await waitUntil('the redraw', async () => (await attr(card('actor/grad_norm'), 'data-alert-marks')) !== '1', 10_000, 100);
    await settled('.charts');
    expect(await attr(chart, 'data-zoomed')).toBe('false');
    await page.uncheck('[data-testid="run-all-alerts"]');
  });

  it('zooms the run view around the step from the Alerts view, and charts the evidence with its threshold', async () => {
    await gotoView(page, 'alerts');
    const cards = page.locator('[data-testid="alert-card"]');
    await waitUntil('the alerts to be listed', async () => (await cards.count()) > 0, 15_000, 100);
    await page.selectOption('[data-testid="alerts-rule"]', 'validity_drop');
    await waitUntil(
      'the validity alerts only',
      async () => {
        const rules = await cards.evaluateAll((cs) => cs.map((c) => c.getAttribute('data-rule')));
        return rules.length > 0 && rules.every((r) => r === 'validity_drop');
      },
      5_000,
      100,
    );
    await settled('[data-testid="alert-card"]');
    await shoot('evidence', '[data-testid="alert-card"]');
    await page.selectOption('[data-testid="alerts-rule"]', '');

    const alert = (await alertsOf(ids[1])).find((a) => a.metric === 'actor/pg_clipfrac')!;
    const target = page.locator(`[data-testid="alert-card"][data-alert="${alert.runId}/${alert.id}"] [data-testid="alert-step-link"]`);
    await target.click();
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${ids[1]}"]`);
    const chart = card('actor/pg_clipfrac').locator('.chart');
    await waitUntil('the clip-fraction chart to zoom', async () => (await attr(chart, 'data-zoomed')) === 'true', 20_000, 100);
    const from = Number(await attr(chart, 'data-x-from'));
    const to = Number(await attr(chart, 'data-x-to'));
    expect(from).toBeLessThan(alert.firstStep);
    expect(to).toBeGreaterThan(alert.firstStep);
    expect(to - from).toBeLessThanOrEqual(41);
  });
});

describe('metric picker', () => {
  it('searches and groups the run page metrics by namespace, and remembers the choice for the next run page', async () => {
    await page.click('[data-testid="metric-picker-toggle"]');
    const picker = page.locator('[data-testid="metric-picker"]');
    await picker.waitFor();
    const namespaces = await picker.locator('[data-testid="metric-group"]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-ns')));
    expect(namespaces).toContain('actor');
    expect(namespaces).toContain('episode');
    await page.fill('[data-testid="metric-search"]', 'entropy');
    await waitUntil(
      'the search to narrow the list',
      async () => (await picker.locator('[data-testid="metric-group"]').count()) < namespaces.length,
      5_000,
      100,
    );
    const keys = await picker
      .locator('input[type="checkbox"][data-key]')
      .evaluateAll((is) => is.map((i) => i.getAttribute('data-key') ?? ''));
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.toLowerCase().includes('entropy') || k.startsWith('actor/'))).toBe(true);
    // Untick entropy, tick the loss: the charts follow.
    await picker.locator('input[data-key="actor/entropy"]').uncheck();
    await waitUntil('the entropy chart to go', async () => (await card('actor/entropy').count()) === 0, 10_000, 100);
    await page.fill('[data-testid="metric-search"]', 'pg_loss');
    await picker.locator('input[data-key="actor/pg_loss"]').check();
    await waitUntil('the loss chart to come', async () => (await card('actor/pg_loss').count()) === 1, 10_000, 100);
    // A chart added after the link still opens zoomed to the alert's window (like the ones already there).
    await waitUntil(
      'the new chart to zoom too',
      async () => (await attr(card('actor/pg_loss').locator('.chart'), 'data-zoomed')) === 'true',
      15_000,
      100,
    );
    await page.fill('[data-testid="metric-search"]', '');
    await shoot('picker', '.charts');

    await open(`/?view=run&id=${ids[0]}`);
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${ids[0]}"]`);
    await card('actor/pg_loss').waitFor({ timeout: 15_000 });
    expect(await card('actor/entropy').count()).toBe(0);
  });

  it("remembers Compare's own choice, apart from the run page's", async () => {
    await open(`/?view=compare&runs=${ids.join(',')}`);
    await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
    const compareCard = (m: string) => page.locator(`[data-testid="compare"] .chart-card[data-metric="${m}"]`);
    // The run page's choice is not Compare's: Compare opens with its defaults.
    expect(await compareCard('actor/entropy').count()).toBe(1);
    expect(await compareCard('actor/pg_loss').count()).toBe(0);
    await page.click('[data-testid="metric-picker-toggle"]');
    const picker = page.locator('[data-testid="metric-picker"]');
    await page.fill('[data-testid="metric-search"]', 'response length');
    await waitUntil('the search', async () => (await picker.locator('[data-testid="metric-group"]').count()) >= 1, 5_000, 100);
    await picker.locator('input[data-key="response_length/mean"]').uncheck();
    await waitUntil('the chart to go', async () => (await compareCard('response_length/mean').count()) === 0, 10_000, 100);
    await page.fill('[data-testid="metric-search"]', '');
    await settled('[data-testid="compare"] .charts');
    await shoot('compare', '[data-testid="compare"] .charts');
    // Opened afresh (the token travels in the fragment, which the app takes off the address).
    await open(`/?view=compare&runs=${ids.join(',')}`);
    await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
    expect(await compareCard('response_length/mean').count()).toBe(0);
    expect(await compareCard('actor/entropy').count()).toBe(1);
  });

  it('ran without CSP violations or uncaught page errors', () => {
    expect(app.problems).toEqual([]);
  });
});
