/**
 * The renderer shell against the real backend: every view opens from the navigation and from its keyboard
 * shortcut, shows what a user needs (or an empty state saying what to do), the About panel shows the version
 * and compute backend fetched through the API, and each view is saved as a screenshot in test-results/.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLabSession, screenshot, type LabSession } from './support/browser';
import { ROOT, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

let lab: Lab;
let app: LabSession;

beforeAll(async () => {
  app = await openLabSession();
  ({ lab } = app);
});

afterAll(async () => {
  await app?.close();
});

const VIEWS = [
  { nav: 'runs', heading: 'Runs' },
  { nav: 'new', heading: 'New run' },
  { nav: 'compare', heading: 'Compare' },
  { nav: 'alerts', heading: 'Alerts' },
  { nav: 'about', heading: 'About' },
] as const;

describe('renderer shell', () => {
  it('loads the chart worker while the runs table (a view without charts) sits idle', async () => {
    const { page } = app;
    expect(await page.locator('main').getAttribute('data-view')).toBe('runs');
    // Nothing on this screen draws a chart: the worker comes from the idle-time preload (chartHost.ts).
    await waitUntil('the chart worker to start', async () => page.workers().some((w) => w.url().includes('chartWorker')), 15_000);
    expect(await page.locator('canvas').count()).toBe(0);
  });

  it('opens every view from the navigation and saves a screenshot of each', async () => {
    const { page } = app;
    for (const v of VIEWS) {
      await page.click(`nav a[data-nav="${v.nav}"]`);
      await page.waitForSelector(`main[data-view="${v.nav}"]`);
      const h2 = await page.locator('main h2').first().innerText();
      expect(h2).toBe(v.heading);
      expect(await page.locator(`nav a[data-nav="${v.nav}"]`).getAttribute('aria-current')).toBe('page');
      // the address bar follows the view (so reload and back work), and the token stays in the fragment
      expect(new URL(page.url()).searchParams.get('view')).toBe(v.nav);
      expect(new URL(page.url()).hash).toBe(`#token=${lab.token}`);
      await page.waitForTimeout(300);
      await screenshot(page, `ui-view-${v.nav}`);
    }
  });

  it('shows the app version and the compute backend from app.info in the About panel', async () => {
    const { page } = app;
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const info = await lab.call('app.info');
    expect(info.ok).toBe(true);
    if (!info.ok) return;
    await page.click('nav a[data-nav="about"]');
    await page.waitForSelector('[data-testid="about-info"]');
    expect(await page.locator('[data-testid="app-version"]').innerText()).toBe(pkg.version);
    const backend = await page.locator('[data-testid="compute-backend"]').innerText();
    expect(backend).toContain(info.value.compute.training);
    expect(backend).toContain(info.value.compute.detail);
    // The gradient worker count a run gets on this machine (compute.workers = 0: one per core).
    expect(info.value.compute.workers).toBeGreaterThanOrEqual(1);
    expect(await page.locator('[data-testid="compute-workers"]').innerText()).toContain(`${info.value.compute.workers} per run`);
    expect(await page.locator('[data-testid="about-info"]').innerText()).toContain(info.value.commit);
  });

  it('switches views with g-prefixed shortcuts and survives a reload and the back button', async () => {
    const { page } = app;
    await page.locator('body').click({ position: { x: 5, y: 200 } });
    for (const [key, view] of [
      ['n', 'new'],
      ['a', 'alerts'],
      ['c', 'compare'],
      ['r', 'runs'],
      ['i', 'about'],
    ] as const) {
      await page.keyboard.press('g');
      await page.keyboard.press(key);
      await page.waitForSelector(`main[data-view="${view}"]`);
    }
    await page.reload();
    await page.waitForSelector('main[data-view="about"][data-ready="true"]');
    await page.goBack();
    await page.waitForSelector('main[data-view="runs"]');
    await page.keyboard.press('?');
    expect(await page.locator('[aria-label="Keyboard shortcuts"][role="dialog"]').isVisible()).toBe(true);
    await page.keyboard.press('Escape');
  });

  it('runs with no CSP violation or uncaught page error', () => {
    expect(app.problems).toEqual([]);
  });
});
