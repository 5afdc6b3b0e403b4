/**
 * Chart controls, in both places a chart can draw: the chart worker (OffscreenCanvas, the default)
 * and the page (a browser without OffscreenCanvas; the fallback). On three synthetic runs (two calm seeds and
 * an entropy collapse, `arlarena runs synth`):
 * - Compare's legend hides and shows a run's series, and in grouped mode lists the groups in their colours;
 * - the log y toggle draws that chart on a log axis;
 * - ctrl + wheel zooms the step axis (every chart of the view with it) and "reset zoom" restores the range;
 * - hovering one chart moves the crosshair of every chart of the view to the same step, labelled "step N" (the
 *   tooltip box only on the chart under the pointer);
 * - the run page has the smoothing control and the same synced crosshair.
 * Screenshots (light and dark) land in test-results/ui-charts-*.png.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPage, screenshot, startSpecLab, type AppPage, type SpecLab } from './support/browser';
import { ROOT, synthRun, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

let spec: SpecLab | undefined;
let lab: Lab;
let browser: Browser;
const ids: string[] = [];

const synth = (shape: string, seed: number, name: string, dataDir: string): string => synthRun(dataDir, { steps: 200, shape, seed, name });

beforeAll(async () => {
  spec = await startSpecLab('arlarena-charts-e2e-', (_work, dataDir) => {
    ids.push(
      synth('calm', 1, 'calm seed 1', dataDir),
      synth('calm', 2, 'calm seed 2', dataDir),
      synth('entropy_collapse', 1, 'entropy collapse', dataDir),
    );
  });
  ({ lab, browser } = spec);
});

afterAll(() => spec?.close());

/** Opens the app at `path`; `inPage` hides OffscreenCanvas so every chart takes the in-page fallback. */
async function open(path: string, inPage: boolean): Promise<AppPage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  if (inPage) await context.addInitScript(() => Object.defineProperty(window, 'OffscreenCanvas', { value: undefined, configurable: true }));
  return openPage(context, lab, path);
}

const attr = async (l: Locator, name: string) => (await l.getAttribute(name)) ?? '';

/** Waits until every chart in `scope` has drawn its latest input. */
async function settled(page: Page, scope: string): Promise<void> {
  await waitUntil(
    'the charts to draw',
    async () => {
      const charts = page.locator(`${scope} .chart`);
      const n = await charts.count();
      if (n === 0) return false;
      for (let i = 0; i < Math.min(n, 4); i++) {
        const c = charts.nth(i);
        if ((await attr(c, 'data-rendered')) !== 'true' || (await attr(c, 'data-pending')) === 'true') return false;
      }
      return true;
    },
    30_000,
    100,
  );
}

/** Moves the mouse to a fraction of a chart's plot width, mid-height. */
async function hover(page: Page, chart: Locator, fx: number, steps = 4): Promise<void> {
  const box = await chart.boundingBox();
  if (!box) throw new Error('chart has no box');
  await page.mouse.move(box.x + 56 + (box.width - 72) * fx, box.y + box.height / 2, { steps });
}

for (const inPage of [false, true]) {
  const where = inPage ? 'page' : 'worker';
  describe(`chart controls, charts drawn in the ${where}`, () => {
    let page: Page;
    let problems: string[];
    const cards = () => page.locator('[data-testid="compare"] .chart-card');

    it('opens Compare with a legend of the runs in their colours', async () => {
      ({ page, problems } = await open(`/?view=compare&runs=${ids.join(',')}`, inPage));
      await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
      await settled(page, '[data-testid="compare"]');
      expect(await attr(cards().first().locator('.chart'), 'data-mode')).toBe(where);
      const entries = page.locator('[data-testid="compare-legend"] .entry');
      expect((await entries.allInnerTexts()).map((t) => t.trim())).toEqual(['calm seed 1', 'calm seed 2', 'entropy collapse']);
      // The legend's swatch and the summary table's swatch of a run are one colour.
      const legendColor = await entries
        .nth(2)
        .locator('.sw')
        .evaluate((el) => getComputedStyle(el).backgroundColor);
      const tableColor = await page
        .locator('[data-testid="summary-table"] tbody tr')
        .nth(2)
        .locator('.sw')
        .evaluate((el) => getComputedStyle(el).backgroundColor);
      expect(legendColor).toBe(tableColor);
    });

    it('hides a run from every chart when its legend entry is clicked, and shows it again', async () => {
      const chart = cards().first().locator('.chart');
      const before = Number(await attr(chart, 'data-series'));
      expect(before).toBe(3);
      const entry = page.locator('[data-testid="compare-legend"] .entry').nth(1);
      await entry.click();
      expect(await attr(entry, 'aria-pressed')).toBe('false');
      await waitUntil(
        'the run to leave the charts',
        async () => (await attr(chart, 'data-series')) === '2' && (await attr(cards().nth(1).locator('.chart'), 'data-series')) === '2',
        10_000,
        100,
      );
      await settled(page, '[data-testid="compare"]');
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
        await settled(page, '[data-testid="compare"]');
        await screenshot(page, `ui-charts-${where}-legend-hidden-${dark ? 'dark' : 'light'}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await entry.click();
      await waitUntil('the run to come back', async () => (await attr(chart, 'data-series')) === '3', 10_000, 100);
      expect(await attr(entry, 'aria-pressed')).toBe('true');
    });

    it('groups by a config key: the legend lists the groups with N, in the colours of the table', async () => {
      await page.locator('select[aria-label="Group by"]').selectOption('synthetic.shape');
      const entries = page.locator('[data-testid="compare-legend"] .entry');
      await waitUntil('the groups in the legend', async () => (await entries.count()) === 2, 10_000, 100);
      expect((await entries.allInnerTexts()).map((t) => t.trim())).toEqual([
        'synthetic.shape = calm (N=2)',
        'synthetic.shape = entropy_collapse (N=1)',
      ]);
      const rows = page.locator('[data-testid="summary-table"] tbody tr .sw');
      const colors = await rows.evaluateAll((els) => els.map((el) => getComputedStyle(el).backgroundColor));
      expect(colors[0]).toBe(colors[1]);
      expect(colors[2]).not.toBe(colors[0]);
      expect(colors[0]).toBe(
        await entries
          .nth(0)
          .locator('.sw')
          .evaluate((el) => getComputedStyle(el).backgroundColor),
      );
      await page.locator('select[aria-label="Band"]').selectOption('minmax');
      await settled(page, '[data-testid="compare"]');
      // 3 faint run lines + 2 group bands
      expect(await attr(cards().first().locator('.chart'), 'data-series')).toBe('5');
      await entries.nth(1).click();
      await waitUntil(
        'the group to leave the charts',
        async () => (await attr(cards().first().locator('.chart'), 'data-series')) === '3',
        10_000,
        100,
      );
      await settled(page, '[data-testid="compare"]');
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
        await settled(page, '[data-testid="compare"]');
        await hover(page, cards().first().locator('.chart'), 0.45);
        await hover(page, cards().first().locator('.chart'), 0.5);
        if (inPage) {
          // The group's row in the tooltip carries its N at that step.
          const chart = cards().first().locator('.chart');
          await waitUntil('the tooltip', async () => /step \d+/.test(await chart.innerText()), 10_000, 100);
          expect(await chart.innerText()).toMatch(/synthetic\.shape = calm \(N=2\)\s+[\d.]+ · N=2/);
        }
        await page.waitForTimeout(200);
        await screenshot(page, `ui-charts-${where}-grouped-minmax-${dark ? 'dark' : 'light'}`);
      }
      await page.mouse.move(5, 5);
      await page.emulateMedia({ colorScheme: 'light' });
      await entries.nth(1).click();
      await page.locator('select[aria-label="Group by"]').selectOption('');
      await waitUntil('the runs back in the legend', async () => (await entries.count()) === 3, 10_000, 100);
      await settled(page, '[data-testid="compare"]');
    });

    it('draws one chart on a log y-axis when its toggle is on, and only that chart', async () => {
      const card = cards().nth(1);
      await card.locator('[data-testid="chart-log"]').check();
      await waitUntil('a log y-axis', async () => (await attr(card.locator('.chart'), 'data-y-scale')) === 'log', 10_000, 100);
      expect(await attr(card.locator('.chart'), 'data-log')).toBe('true');
      // ECharts names a linear scale 'interval'.
      expect(await attr(cards().first().locator('.chart'), 'data-y-scale')).toBe('interval');
      await card.scrollIntoViewIfNeeded();
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
        await settled(page, '[data-testid="compare"]');
        await card.screenshot({ path: join(ROOT, 'test-results', `ui-charts-${where}-log-${dark ? 'dark' : 'light'}.png`) });
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await card.locator('[data-testid="chart-log"]').uncheck();
      await waitUntil(
        'a linear y-axis again',
        async () => (await attr(card.locator('.chart'), 'data-y-scale')) === 'interval',
        10_000,
        100,
      );
    });

    it('zooms the step axis with ctrl + wheel (every chart of the view) and resets to the whole range', async () => {
      const first = cards().first().locator('.chart');
      const second = cards().nth(1).locator('.chart');
      await first.scrollIntoViewIfNeeded();
      const from0 = Number(await attr(first, 'data-x-from'));
      const to0 = Number(await attr(first, 'data-x-to'));
      expect(to0 - from0).toBeGreaterThanOrEqual(150);
      await hover(page, first, 0.5);
      await page.keyboard.down('Control');
      for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -120);
      await page.keyboard.up('Control');
      await waitUntil('the chart to zoom in', async () => (await attr(first, 'data-zoomed')) === 'true', 10_000, 100);
      const from1 = Number(await attr(first, 'data-x-from'));
      const to1 = Number(await attr(first, 'data-x-to'));
      expect(to1 - from1).toBeLessThan(to0 - from0);
      expect(from1).toBeGreaterThanOrEqual(from0);
      expect(to1).toBeLessThanOrEqual(to0);
      // Connected: the other charts of the view show the same window.
      await waitUntil('the other chart to follow the zoom', async () => (await attr(second, 'data-zoomed')) === 'true', 10_000, 100);
      expect(Number(await attr(second, 'data-x-to')) - Number(await attr(second, 'data-x-from'))).toBeLessThan(to0 - from0);
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
        await settled(page, '[data-testid="compare"]');
        await screenshot(page, `ui-charts-${where}-zoomed-${dark ? 'dark' : 'light'}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await cards().first().locator('[data-testid="chart-reset-zoom"]').click();
      await waitUntil(
        'the zoom to reset',
        async () => (await attr(first, 'data-zoomed')) === 'false' && (await attr(second, 'data-zoomed')) === 'false',
        10_000,
        100,
      );
      expect(Number(await attr(first, 'data-x-from'))).toBe(from0);
      expect(Number(await attr(first, 'data-x-to'))).toBe(to0);
      expect(await cards().first().locator('[data-testid="chart-reset-zoom"]').isDisabled()).toBe(true);
    });

    it('moves the crosshair of every chart to the hovered step, labelled "step N"', async () => {
      const first = cards().first().locator('.chart');
      const second = cards().nth(1).locator('.chart');
      await settled(page, '[data-testid="compare"]');
      // The other chart hovered first, then one single move onto this one: the group's hovered chart must change
      // before that move is handled, or the move is reported with the other chart's x (a flake seen in CI).
      await hover(page, second, 0.3);
      await waitUntil('the other chart hovered', async () => /^step \d+$/.test(await attr(second, 'data-hover')), 10_000, 100);
      await hover(page, first, 0.6, 1);
      await waitUntil(
        "a hovered step past the other chart's",
        async () => {
          const h = await attr(first, 'data-hover');
          return /^step \d+$/.test(h) && Number(h.slice(5)) > 80;
        },
        10_000,
        100,
      );
      const label = await attr(first, 'data-hover');
      const step = Number(label.slice(5));
      expect(step).toBeGreaterThan(80);
      expect(step).toBeLessThan(160);
      await waitUntil('the other chart to show the same step', async () => (await attr(second, 'data-hover')) === label, 10_000, 100);
      if (inPage) {
        // In the page ECharts' tooltip is HTML: its header is the step as an integer, not "171.00".
        const tip = first.locator('div', { hasText: /^step \d+/ }).last();
        await tip.waitFor({ timeout: 10_000 });
        expect((await tip.innerText()).split('\n')[0].trim()).toBe(label);
        // Only the chart under the pointer shows its tooltip box; the others show the crosshair line alone. The chart
        // the pointer came from drops the box it showed when hovered within the tooltip's hide delay (100 ms).
        await waitUntil("the other chart's box to go", async () => !/step \d+/.test(await second.innerText()), 2_000, 50);
      }
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
        // The charts redraw in the new theme; once settled, a hover must still reach the other chart. The step
        // under the pointer may differ from before by a point (the axes' labels change width with the redraw).
        await settled(page, '[data-testid="compare"]');
        await hover(page, first, 0.3);
        await hover(page, first, 0.6);
        await waitUntil(
          'the crosshair after the theme change',
          async () => {
            const here = await attr(first, 'data-hover');
            return /^step \d+$/.test(here) && (await attr(second, 'data-hover')) === here;
          },
          10_000,
          100,
        );
        await page.waitForTimeout(200);
        await screenshot(page, `ui-charts-${where}-crosshair-${dark ? 'dark' : 'light'}`);
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await page.mouse.move(5, 5);
      await waitUntil('the crosshair to leave', async () => (await attr(second, 'data-hover')) === '', 10_000, 100);
      expect(problems).toEqual([]);
    });

    it('gives the run page the smoothing control and the synced crosshair', async () => {
      await page.goto(`${lab.origin}/?view=run&id=${ids[2]}#token=${lab.token}`);
      await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${ids[2]}"]`);
      await settled(page, '[data-testid="run-detail"]');
      const controls = page.locator('[data-testid="run-chart-controls"]');
      const strength = controls.locator('input[aria-label="Smoothing strength"]');
      expect(await strength.isDisabled()).toBe(true);
      await controls.locator('select[aria-label="Smoothing"]').selectOption('ema');
      expect(await strength.isDisabled()).toBe(false);
      await settled(page, '[data-testid="run-detail"]');
      const charts = page.locator('[data-testid="run-detail"] .chart-card .chart');
      await charts.first().scrollIntoViewIfNeeded();
      await hover(page, charts.first(), 0.5);
      await waitUntil('a hovered step', async () => /^step \d+$/.test(await attr(charts.first(), 'data-hover')), 10_000, 100);
      const label = await attr(charts.first(), 'data-hover');
      await waitUntil(
        'the other run chart to show the same step',
        async () => (await attr(charts.nth(1), 'data-hover')) === label,
        10_000,
        100,
      );
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
        await settled(page, '[data-testid="run-detail"]');
        await hover(page, charts.first(), 0.4);
        await hover(page, charts.first(), 0.5);
        await page.waitForTimeout(200);
        await screenshot(page, `ui-charts-${where}-run-smoothed-${dark ? 'dark' : 'light'}`);
      }
      expect(problems).toEqual([]);
      await page.context().close();
    });
  });
}

/** A PNG's width and height (its IHDR) and the RGBA of some of its pixels, decoded by the page's own image decoder. */
async function pngFacts(page: Page, bytes: Buffer, at: [number, number][]): Promise<{ width: number; height: number; pixels: number[][] }> {
  expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  const width = bytes.readUInt32BE(16);
  const height = bytes.readUInt32BE(20);
  const pixels = await page.evaluate(
    async ({ b64, at }) => {
      const img = await createImageBitmap(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], { type: 'image/png' }));
      // A page canvas: the in-page mode's test hides OffscreenCanvas.
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d')!;
      ctx.drawImage(img, 0, 0);
      return at.map(([x, y]) => [...ctx.getImageData(x, y, 1, 1).data]);
    },
    { b64: bytes.toString('base64'), at },
  );
  return { width, height, pixels };
}

describe("a chart's PNG button", () => {
  for (const inPage of [false, true]) {
    it(`saves a chart drawn in the ${inPage ? 'page' : 'worker'} as a PNG of its size with a legend strip, on an opaque background`, async () => {
      const { page, problems } = await open(`/?view=compare&runs=${ids.join(',')}`, inPage);
      await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
      await settled(page, '[data-testid="compare"]');
      const card = page.locator('[data-testid="compare"] .chart-card').first();
      const chart = card.locator('.chart');
      expect(await attr(chart, 'data-mode')).toBe(inPage ? 'page' : 'worker');
      await page.emulateMedia({ colorScheme: 'dark' });
      await settled(page, '[data-testid="compare"]');
      const key = await attr(card, 'data-metric');
      const [download] = await Promise.all([page.waitForEvent('download'), card.locator('[data-testid="chart-png"]').click()]);
      expect(download.suggestedFilename()).toBe(`compare.${key.replace(/[^A-Za-z0-9._-]+/g, '_')}.png`);
      const box = await chart.evaluate((el) => ({ w: el.clientWidth, h: el.clientHeight, dpr: window.devicePixelRatio }));
      const chartH = Math.round(box.h * box.dpr);
      // The first legend swatch (chartPng.ts: 8 px padding, a 10 px swatch centred on a 12 px line).
      const swatch: [number, number] = [Math.round(13 * box.dpr), chartH + Math.round(14 * box.dpr)];
      const facts = await pngFacts(page, readFileSync((await download.path())!), [[0, 0], swatch]);
      await download.saveAs(join(ROOT, 'test-results', `ui-charts-png-${inPage ? 'page' : 'worker'}-dark.png`));
      expect(facts.width).toBe(Math.round(box.w * box.dpr));
      // Three runs: a legend strip under the chart says which line is which.
      expect(facts.height).toBeGreaterThan(chartH + 20 * box.dpr);
      // Dark mode: a transparent PNG would be light text on nothing once pasted into a document.
      expect(facts.pixels[0][3]).toBe(255);
      const first = await page
        .locator('[data-testid="compare-legend"] .entry .sw')
        .first()
        .evaluate((el) => getComputedStyle(el).backgroundColor);
      expect(`rgb(${facts.pixels[1].slice(0, 3).join(', ')})`).toBe(first);
      expect(await card.locator('[data-testid="chart-tool-error"]').count()).toBe(0);
      expect(problems).toEqual([]);
      await page.context().close();
    });
  }
});

describe("a chart's CSV button", () => {
  it("downloads every logged point of the runs the chart draws, in W&B's chart-export layout", async () => {
    const { page, problems } = await open(`/?view=compare&runs=${ids.join(',')}`, false);
    await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
    await settled(page, '[data-testid="compare"]');
    // Hide the second run: the file holds the runs the chart draws.
    await page.locator('[data-testid="compare-legend"] .entry').nth(1).click();
    const card = page.locator('[data-testid="compare"] .chart-card').first();
    const key = await attr(card, 'data-metric');
    const [download] = await Promise.all([page.waitForEvent('download'), card.locator('[data-testid="chart-csv"]').click()]);
    expect(download.suggestedFilename()).toBe(`compare.${key.replace(/[^A-Za-z0-9._-]+/g, '_')}.csv`);
    const lines = readFileSync((await download.path())!, 'utf8')
      .trimEnd()
      .split('\n');
    expect(lines[0]).toBe(
      ['Step', ...['calm seed 1', 'entropy collapse'].flatMap((r) => [`${r} - ${key}`, `${r} - ${key}__MIN`, `${r} - ${key}__MAX`])].join(
        ',',
      ),
    );
    // 200 steps of both runs, not the chart's downsampled points; each row's MIN and MAX equal its value.
    expect(lines.length).toBe(201);
    expect(lines[1].split(',')[0]).toBe('1');
    for (const line of lines.slice(1)) {
      const c = line.split(',');
      expect(c[1]).toBe(c[2]);
      expect(c[4]).toBe(c[6]);
    }

    await page.goto(`${lab.origin}/?view=run&id=${ids[2]}#token=${lab.token}`);
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${ids[2]}"]`);
    await settled(page, '[data-testid="run-detail"]');
    const runCard = page.locator('[data-testid="run-detail"] .chart-card').first();
    const runKey = await attr(runCard, 'data-metric');
    const [one] = await Promise.all([page.waitForEvent('download'), runCard.locator('[data-testid="chart-csv"]').click()]);
    expect(one.suggestedFilename()).toBe(`entropy_collapse.${runKey.replace(/[^A-Za-z0-9._-]+/g, '_')}.csv`);
    const runLines = readFileSync((await one.path())!, 'utf8')
      .trimEnd()
      .split('\n');
    expect(runLines[0]).toBe(`Step,entropy collapse - ${runKey},entropy collapse - ${runKey}__MIN,entropy collapse - ${runKey}__MAX`);
    expect(runLines.length).toBeGreaterThan(100);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
