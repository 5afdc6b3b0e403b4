/**
 * Alerts triage and the empty Compare, on three synthetic runs whose alerts `arlarena check --save`
 * stored (a CISPO collapse: eight critical alerts over several rules; a length runaway: one warning, one
 * critical; a dead signal: one warning):
 * - the severity and rule selects offer exactly the values present, and filter the cards;
 * - "Group by run" puts each run's alerts under that run's heading;
 * - "Acknowledge all" acknowledges the filtered alerts only (checked through the API);
 * - an alert's step link opens the run view at that metric's chart (charted first, even when it is not one of
 *   the default charts), with the step named;
 * - an empty Compare offers a button that opens the runs table.
 * Screenshots of the triaged inbox (light and dark): test-results/ui-alerts-triage-{light,dark}.png.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLabSession, screenshot, type LabSession } from './support/browser';
import { checkRun, synthRun, type Lab } from './support/lab';
import { gotoView, waitUntil } from './uiHelpers';

let work = '';
let lab: Lab;
let app: LabSession;
let page: Page;
const ids: Record<string, string> = {};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-triage-e2e-'));
  const dataDir = join(work, 'data');
  for (const shape of ['cispo_collapse', 'length_runaway', 'dead_signal']) {
    ids[shape] = synthRun(dataDir, { steps: 200, shape, seed: 1, name: `triage ${shape}` });
    checkRun(dataDir, ids[shape]);
  }
  app = await openLabSession({ dataDir });
  ({ lab, page } = app);
});

afterAll(async () => {
  await app?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const cards = () => page.locator('[data-testid="alert-card"]');
const optionValues = (testid: string) =>
  page.locator(`[data-testid="${testid}"] option`).evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
const attrs = (name: string) => cards().evaluateAll((cs, n) => cs.map((c) => c.getAttribute(n) ?? ''), name);

async function stored(): Promise<
  { runId: string; id: string; rule: string; severity: string; metric: string; firstStep: number; acknowledged: boolean }[]
> {
  const res = await lab.call('alerts.list', {});
  if (!res.ok) throw new Error(`alerts.list failed: ${JSON.stringify(res)}`);
  return res.value;
}

describe('alerts triage', () => {
  let total = 0;

  it('offers the severities and rules present, and filters the cards by them', async () => {
    const all = await stored();
    total = all.length;
    expect(new Set(all.map((a) => a.runId)).size).toBe(3);
    await gotoView(page, 'alerts');
    await waitUntil('every stored alert to be listed', async () => (await cards().count()) === total, 15_000);
    expect(await optionValues('alerts-severity')).toEqual(['', 'critical', 'warning']);
    expect(await optionValues('alerts-rule')).toEqual(['', ...[...new Set(all.map((a) => a.rule))].sort()]);

    await page.selectOption('[data-testid="alerts-severity"]', 'warning');
    const warnings = all.filter((a) => a.severity === 'warning').length;
    expect(warnings).toBeGreaterThanOrEqual(2);
    await waitUntil('the warning filter', async () => (await cards().count()) === warnings, 5_000, 100);
    expect(new Set(await attrs('data-severity'))).toEqual(new Set(['warning']));
    expect(await page.locator('[data-testid="alerts-count"]').innerText()).toBe(`${warnings} of ${total} shown`);

    await page.selectOption('[data-testid="alerts-severity"]', '');
    await page.selectOption('[data-testid="alerts-rule"]', 'length_runaway');
    const runaway = all.filter((a) => a.rule === 'length_runaway').length;
    await waitUntil('the rule filter', async () => (await cards().count()) === runaway, 5_000, 100);
    expect(new Set(await attrs('data-rule'))).toEqual(new Set(['length_runaway']));
    await page.selectOption('[data-testid="alerts-rule"]', '');
    await waitUntil('the filters to clear', async () => (await cards().count()) === total, 5_000, 100);
  });

  it('groups the alerts under their run', async () => {
    await page.check('[data-testid="alerts-by-run"]');
    const groups = page.locator('[data-testid="alert-group"]');
    await waitUntil('three run groups', async () => (await groups.count()) === 3, 5_000, 100);
    const all = await stored();
    for (let i = 0; i < 3; i++) {
      const g = groups.nth(i);
      const runId = (await g.getAttribute('data-run')) ?? '';
      const keys = await g.locator('[data-testid="alert-card"]').evaluateAll((cs) => cs.map((c) => c.getAttribute('data-alert') ?? ''));
      expect(keys.length).toBe(all.filter((a) => a.runId === runId).length);
      expect(keys.every((k) => k.startsWith(`${runId}/`))).toBe(true);
      const shape = Object.keys(ids).find((s) => ids[s] === runId);
      expect(await g.locator('h3').innerText()).toContain(`triage ${shape}`);
    }
    // The triaged inbox: warnings only, grouped by run. Evidence charts draw in the worker; wait for them.
    await page.selectOption('[data-testid="alerts-severity"]', 'warning');
    const undrawn = page.locator(
      '[data-testid="alert-card"] .chart[data-drawn="true"][data-rendered="false"], [data-testid="alert-card"] .chart[data-pending="true"]',
    );
    await waitUntil('the evidence charts to be drawn', async () => (await undrawn.count()) === 0, 30_000, 100);
    await screenshot(page, 'ui-alerts-triage-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(400);
    await waitUntil('the evidence charts to be redrawn', async () => (await undrawn.count()) === 0, 30_000, 100);
    await screenshot(page, 'ui-alerts-triage-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('acknowledges all the filtered alerts, and only those', async () => {
    const before = await stored();
    const warnings = before.filter((a) => a.severity === 'warning');
    const ackAll = page.locator('[data-testid="alerts-ack-all"]');
    expect(await ackAll.innerText()).toBe(`Acknowledge all (${warnings.length})`);
    await ackAll.click();
    await waitUntil('the acknowledged alerts to leave the open list', async () => (await cards().count()) === 0, 15_000, 100);
    const after = await stored();
    expect(
      after
        .filter((a) => a.acknowledged)
        .map((a) => `${a.runId}/${a.id}`)
        .sort(),
    ).toEqual(warnings.map((a) => `${a.runId}/${a.id}`).sort());
    expect(await page.locator('[data-testid="empty-state"] h3').innerText()).toBe('No alert matches the filters');
    await page.selectOption('[data-testid="alerts-severity"]', '');
    await waitUntil(
      'the critical alerts to stay open',
      async () => (await cards().count()) === before.length - warnings.length,
      5_000,
      100,
    );
    expect(await ackAll.innerText()).toBe(`Acknowledge all (${before.length - warnings.length})`);
  });

  it("opens the run view at an alert's metric chart from its step link", async () => {
    await page.uncheck('[data-testid="alerts-by-run"]');
    // A metric the run view does not chart by default: the link charts it, first.
    const alert = (await stored()).find((a) => a.runId === ids.length_runaway && !a.acknowledged);
    expect(alert).toBeTruthy();
    const card = page.locator(`[data-testid="alert-card"][data-alert="${alert!.runId}/${alert!.id}"]`);
    expect(await card.locator('[data-testid="alert-step-link"]').getAttribute('href')).toBe(
      `?view=run&id=${alert!.runId}&metric=${encodeURIComponent(alert!.metric)}&step=${alert!.firstStep}`,
    );
    await card.locator('[data-testid="alert-step-link"]').click();
    await page.waitForSelector(`main[data-view="run"] [data-testid="run-detail"][data-run-id="${alert!.runId}"]`);
    const focused = page.locator('.chart-card[data-focused="true"]');
    await focused.waitFor({ timeout: 15_000 });
    expect(await focused.getAttribute('data-metric')).toBe(alert!.metric);
    expect(await page.locator('.charts .chart-card').first().getAttribute('data-metric')).toBe(alert!.metric);
    expect(await focused.locator('[data-testid="run-focus-note"]').innerText()).toContain(`step ${alert!.firstStep}`);
    // The metric's series loads once the chart is added: its points arrive.
    await waitUntil("the metric's points to load", async () => Number(await focused.getAttribute('data-points')) > 0, 15_000, 100);
    expect(page.url()).toContain(`metric=${encodeURIComponent(alert!.metric)}&step=${alert!.firstStep}`);
  });

  it('offers a button on the empty Compare that opens the runs table', async () => {
    await gotoView(page, 'compare');
    const pick = page.locator('[data-testid="compare-pick-runs"]');
    await pick.waitFor();
    await pick.click();
    await page.waitForSelector('main[data-view="runs"]');
  });

  it('ran without CSP violations or uncaught page errors', () => {
    expect(app.problems).toEqual([]);
  });
});
