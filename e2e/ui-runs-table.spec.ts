/**
 * The runs table tells runs apart: seed and short id on every row (and in Compare's summary),
 * held-out validation success with its 95 % Wilson interval beside the training success, an ETA column that
 * is blank for finished runs, ticked runs still ticked after opening a run or Compare and coming back, and
 * summary columns added from the Columns menu (sortable, kept across reloads).
 * Three synthetic runs (`arlarena runs synth`, which logs val/success_rate and val/episodes every 10 steps),
 * two of them with the same name. Screenshots (light and dark) land in test-results/ui-runs-table-*.png.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLabSession, screenshotThemes, type LabSession } from './support/browser';
import { synthRun, type Lab } from './support/lab';
import { gotoView } from './uiHelpers';

let work = '';
let lab: Lab;
let app: LabSession;
let page: Page;
const ids: string[] = [];

const synth = (dataDir: string, seed: number, name: string): string => synthRun(dataDir, { steps: 40, shape: 'calm', seed, name });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-runs-table-e2e-'));
  const dataDir = join(work, 'data');
  ids.push(synth(dataDir, 1, 'twin'), synth(dataDir, 2, 'twin'), synth(dataDir, 7, 'other'));
  app = await openLabSession({ dataDir });
  ({ lab, page } = app);
});

afterAll(async () => {
  await app?.close();
  if (work && !process.env.ARLARENA_E2E_KEEP_DATA) rmSync(work, { recursive: true, force: true });
});

const row = (id: string) => page.locator(`tr[data-run-id="${id}"]`);

const shots = (name: string): Promise<void> => screenshotThemes(page, name);

describe('runs table columns and kept selection', () => {
  it('shows seed, short id, validation with its interval, train success and a blank ETA for finished runs', async () => {
    await gotoView(page, 'runs');
    await row(ids[2]!).waitFor();
    const heads = await page.locator('table.runs thead th').allInnerTexts();
    for (const h of ['Seed', 'Validation', 'Train success', 'ETA']) expect(heads.some((t) => t.startsWith(h))).toBe(true);
    for (const [i, seed] of [
      [0, '1'],
      [1, '2'],
      [2, '7'],
    ] as const) {
      const r = row(ids[i]!);
      expect(await r.locator('[data-col="seed"]').innerText()).toBe(seed);
      expect(await r.locator('[data-col="id"]').innerText()).toBe(ids[i]!.slice(-6));
      // The store's summary holds the last val/success_rate and val/episodes: the cell must show both.
      const rec = await lab.call('runs.get', { runId: ids[i]! });
      if (!rec.ok) throw new Error(rec.error.message);
      const p = rec.value.summary['val/success_rate'];
      expect(typeof p).toBe('number');
      expect(rec.value.summary['val/episodes']).toBeGreaterThan(0);
      const val = await r.locator('[data-col="validation"]').innerText();
      expect(val).toMatch(new RegExp(`^${(100 * p!).toFixed(1)} % \\[\\d+\\.\\d–\\d+\\.\\d\\]$`));
      expect(await r.locator('[data-col="train-success"]').innerText()).toMatch(/^\d+\.\d %$/);
      expect(await r.locator('[data-col="eta"]').innerText()).toBe('');
    }
    // The two "twin" rows differ by their seed and id cells.
    expect(await row(ids[0]!).locator('[data-col="id"]').innerText()).not.toBe(await row(ids[1]!).locator('[data-col="id"]').innerText());
    await shots('ui-runs-table');
  });

  it('keeps ticked runs after opening a run and after Compare, and Compare shows seed and short id', async () => {
    await row(ids[0]!).locator('input[type="checkbox"]').check();
    await row(ids[1]!).locator('input[type="checkbox"]').check();
    expect(await page.locator('[data-testid="compare-selected"]').innerText()).toContain('(2)');

    await row(ids[2]!).locator('a').first().click();
    await page.waitForSelector('[data-testid="run-detail"]');
    await gotoView(page, 'runs');
    await row(ids[0]!).waitFor();
    expect(await row(ids[0]!).locator('input[type="checkbox"]').isChecked()).toBe(true);
    expect(await row(ids[1]!).locator('input[type="checkbox"]').isChecked()).toBe(true);
    expect(await row(ids[2]!).locator('input[type="checkbox"]').isChecked()).toBe(false);

    await page.locator('[data-testid="compare-selected"]').click();
    const summary = page.locator('[data-testid="summary-table"]');
    await summary.waitFor({ timeout: 30_000 });
    const cells = await summary.locator('[data-col="seed-id"]').allInnerTexts();
    expect(cells.sort()).toEqual([`seed 1 · ${ids[0]!.slice(-6)}`, `seed 2 · ${ids[1]!.slice(-6)}`].sort());

    await gotoView(page, 'runs');
    await row(ids[0]!).waitFor();
    expect(await row(ids[0]!).locator('input[type="checkbox"]').isChecked()).toBe(true);
    expect(await row(ids[1]!).locator('input[type="checkbox"]').isChecked()).toBe(true);
    expect(await page.locator('[data-testid="compare-selected"]').innerText()).toContain('(2)');
    expect(app.problems).toEqual([]);
  });

  it('adds a summary column from the Columns menu, sorts by it, and still has it after a reload', async () => {
    const key = 'best/val/success_rate';
    const columns = page.locator('[data-testid="runs-columns"]');
    await columns.locator('summary').click();
    await columns.locator(`input[data-key="${key}"]`).check();
    expect(await columns.locator('summary').innerText()).toBe('Columns (+1)');
    const heads = await page.locator('table.runs thead th').allInnerTexts();
    // Beside the other success columns.
    const names = heads.map((h) => h.trim());
    expect(names.slice(names.indexOf('Validation'), names.indexOf('Validation') + 3)).toEqual([
      'Validation',
      'Train success',
      'Best validation',
    ]);
    // Each cell is the run's stored best validation success.
    const best = new Map<string, number>();
    for (const id of ids) {
      const rec = await lab.call('runs.get', { runId: id });
      if (!rec.ok) throw new Error(rec.error.message);
      const v = rec.value.summary[key];
      expect(typeof v).toBe('number');
      best.set(id, v as number);
      expect(await row(id).locator(`[data-col="summary:${key}"]`).innerText()).toBe(`${((v as number) * 100).toFixed(1)} %`);
    }
    await page.locator('table.runs thead th', { hasText: 'Best validation' }).locator('button').click();
    const order = await page.locator('table.runs tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run-id')));
    expect(new Set(order)).toEqual(new Set(ids));
    const values = order.map((id) => best.get(id!)!);
    expect(values).toEqual([...values].sort((a, b) => b - a));
    expect(await page.locator('table.runs thead th', { hasText: 'Best validation' }).getAttribute('aria-sort')).toBe('descending');
    await shots('ui-runs-table-columns');
    // A menu: the click on the column header closed it; so do Escape and a click elsewhere.
    expect(await columns.getAttribute('open')).toBeNull();
    await columns.locator('summary').click();
    expect(await columns.getAttribute('open')).not.toBeNull();
    await page.keyboard.press('Escape');
    expect(await columns.getAttribute('open')).toBeNull();
    await columns.locator('summary').click();
    expect(await columns.getAttribute('open')).not.toBeNull();
    await page.locator('h2#runs-title').click();
    expect(await columns.getAttribute('open')).toBeNull();
    await page.reload();
    await row(ids[0]!).waitFor();
    expect(await row(ids[0]!).locator(`[data-col="summary:${key}"]`).count()).toBe(1);
    expect(app.problems).toEqual([]);
  });
});
