/**
 * Compare's verdict on runs the collapse detector never read. Synthetic runs (`arlarena runs synth`) are written
 * without the detector, so "no alerts" there is no evidence: before this, Compare called a synthetic collapse run
 * "Stable — no alerts". Now such a run is "Not checked" (or "Watch" when its own success curve fell beyond noise,
 * saying the detector has not looked); the Alerts column and the runs table say "not checked", and Compare's
 * button runs the detector on them (runs.detect with save), after which the collapse run shows its alerts and
 * is "Collapsed" while the calm one is "Stable". The Alerts view says how many runs the detector has not read and
 * has the same button. Screenshots: test-results/ui-verdict-*.png.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot, startSpecLab, type SpecLab } from './support/browser';
import { synthRun, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

let spec: SpecLab | undefined;
let lab: Lab;
let browser: Browser;
let page: Page;
const problems: string[] = [];
let calm = '';
let collapse = '';
let third = '';

const synth = (shape: string, name: string, dataDir: string): string => synthRun(dataDir, { steps: 300, shape, seed: 1, name });

beforeAll(async () => {
  spec = await startSpecLab('arlarena-verdict-e2e-', (_work, dataDir) => {
    calm = synth('calm', 'calm run', dataDir);
    collapse = synth('cispo_collapse', 'collapse run', dataDir);
    third = synth('entropy_collapse', 'entropy run', dataDir);
  });
  ({ lab, browser } = spec);
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
});

afterAll(() => spec?.close());

const verdictOf = (id: string) => page.locator(`[data-testid="summary-table"] tr:has(a[href="?view=run&id=${id}"]) [data-verdict]`);

describe('Compare on runs the detector never read', () => {
  it('says "not checked" in the runs table', async () => {
    await page.goto(`${lab.origin}/?view=runs#token=${lab.token}`, { waitUntil: 'load' });
    await page.waitForSelector(`tr:has-text("collapse run") [data-col="not-checked"]`, { timeout: 30_000 });
    expect(await page.locator('[data-col="not-checked"]').count()).toBe(3);
  });

  it('says in the Alerts view that the runs have not been checked', async () => {
    await page.goto(`${lab.origin}/?view=alerts#token=${lab.token}`, { waitUntil: 'load' });
    const note = page.locator('[data-testid="alerts-unchecked"]');
    await note.waitFor({ timeout: 30_000 });
    expect(await note.innerText()).toMatch(/^3 runs have not been checked by the collapse detector/);
    expect(await page.locator('[data-testid="alert-card"]').count()).toBe(0);
  });

  it('calls neither run stable, says why, and offers to run the detector on both', async () => {
    await page.goto(`${lab.origin}/?view=compare&runs=${calm},${collapse}#token=${lab.token}`, { waitUntil: 'load' });
    await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
    expect(await verdictOf(calm).getAttribute('data-verdict')).toBe('unchecked');
    expect(await verdictOf(calm).innerText()).toBe('Not checked');
    // The collapse run's own curve already shows the fall; the verdict says the detector has not looked.
    expect(await verdictOf(collapse).getAttribute('data-verdict')).toBe('watch');
    const reason = page.locator(`[data-testid="summary-table"] tr:has(a[href="?view=run&id=${collapse}"]) td:last-child`);
    expect(await reason.innerText()).toMatch(/beyond sampling noise .*; the detector has not checked this run — run it to check$/);
    expect(await page.locator('[data-testid="summary-table"] [data-col="not-checked"]').count()).toBe(2);
    const note = page.locator('[data-testid="unchecked-runs"]');
    expect(await note.innerText()).toMatch(/^2 runs have not been checked by the collapse detector/);
    await screenshot(page, 'ui-verdict-unchecked');
  });

  it('runs the detector from Compare: the collapse run gets its alerts and "Collapsed", the calm one "Stable"', async () => {
    await page.locator('[data-testid="unchecked-runs"] button').click();
    await waitUntil(
      'the verdicts after the detector ran',
      async () => (await verdictOf(collapse).getAttribute('data-verdict')) === 'collapsed',
      30_000,
      100,
    );
    expect(await verdictOf(calm).getAttribute('data-verdict')).toBe('stable');
    expect(await page.locator('[data-testid="unchecked-runs"]').count()).toBe(0);
    const row = page.locator(`[data-testid="summary-table"] tr:has(a[href="?view=run&id=${collapse}"])`);
    expect(await row.innerText()).toMatch(/\d+ critical/);
    // Stored, not only shown: the record says the detector read the run to its last step.
    const rec = await lab.call('runs.get', { runId: collapse });
    expect(rec).toMatchObject({ ok: true, value: { detectedThrough: 300 } });
    expect((rec as { value: { alerts: unknown[] } }).value.alerts.length).toBeGreaterThan(0);
    await screenshot(page, 'ui-verdict-checked');
  });

  it('lists those alerts in the Alerts view, and its own button checks the run Compare did not', async () => {
    await page.goto(`${lab.origin}/?view=alerts#token=${lab.token}`, { waitUntil: 'load' });
    const note = page.locator('[data-testid="alerts-unchecked"]');
    await note.waitFor({ timeout: 30_000 });
    expect(await note.innerText()).toMatch(/^1 run has not been checked by the collapse detector/);
    const cards = page.locator('[data-testid="alert-card"]');
    const runsOf = async () =>
      new Set((await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-alert') ?? ''))).map((a) => a.split('/')[0]));
    expect([...(await runsOf())]).toEqual([collapse]);
    await note.locator('button').click();
    await waitUntil("the third run's alerts", async () => (await runsOf()).has(third), 30_000, 100);
    expect(await page.locator('[data-testid="alerts-unchecked"]').count()).toBe(0);
    await waitUntil(
      'the evidence charts to draw',
      async () => {
        const states = await page
          .locator('[data-testid="alert-card"] .chart')
          .evaluateAll((els) => els.map((e) => e.getAttribute('data-rendered')));
        return states.length > 0 && states.every((s) => s === 'true');
      },
      30_000,
      100,
    );
    await screenshot(page, 'ui-verdict-alerts');
  });

  it('ran without CSP violations or uncaught page errors', () => {
    expect(problems).toEqual([]);
  });
});
