/**
 * The runs table in a 1280 px window with a run named like a TensorBoard event file (no space to break at): the
 * table fits the window and every row's Rename / Tags / Delete stay on screen (its scrollWidth was 1448).
 * Screenshots: test-results/ui-runs-narrow-{light,dark}.png.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { screenshot, startSpecLab, type SpecLab } from './support/browser';
import { synthRun, type Lab } from './support/lab';

let spec: SpecLab | undefined;
let lab: Lab;
let browser: Browser;

beforeAll(async () => {
  spec = await startSpecLab('arlarena-runs-narrow-e2e-', (_work, dataDir) => {
    for (const name of ['events.out.tfevents.1761155467.instance-20251022-125445.223516.0', 'short one'])
      synthRun(dataDir, { steps: 20, name });
  });
  ({ lab, browser } = spec);
});

afterAll(() => spec?.close());

it('fits a 1280 px window with a long unbroken run name, its row actions in view', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${lab.origin}/?view=runs#token=${lab.token}`, { waitUntil: 'load' });
  await page.waitForSelector('tr[data-run-id]');
  const sizes = await page
    .locator('table.runs')
    .evaluate((t) => ({ table: t.scrollWidth, page: document.documentElement.clientWidth, doc: document.documentElement.scrollWidth }));
  expect(sizes.doc, JSON.stringify(sizes)).toBeLessThanOrEqual(sizes.page);
  for (const button of await page.locator('td.actions button').all()) {
    const box = (await button.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(1280);
  }
  for (const dark of [false, true]) {
    await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
    await screenshot(page, `ui-runs-narrow-${dark ? 'dark' : 'light'}`);
  }
  await context.close();
});
