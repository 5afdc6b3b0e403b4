/**
 * The app sees the CLI: a page open on the lab follows what another process does to the same data directory.
 * - a run the CLI writes (`arlarena runs synth`) appears in the open runs table without a reload;
 * - a run page opened on a stopped run follows another process training it (status and step move), and when it
 *   stops again offers Resume, which asks this app to continue it (sessions.resume) and the page follows.
 * The "other process" is the CLI for the first, and a RunStore opened in this test process for the second (as
 * `arlarena resume` opens its own store and claims the run).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../src/main/store/runStore';
import { screenshot, startSpecLab, type SpecLab } from './support/browser';
import { synthRun, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

let spec: SpecLab | undefined;
let dataDir = '';
let lab: Lab;
let browser: Browser;

beforeAll(async () => {
  spec = await startSpecLab('arlarena-live-store-e2e-');
  ({ dataDir, lab, browser } = spec);
});

afterAll(() => spec?.close());

async function open(path: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${lab.origin}${path}#token=${lab.token}`, { waitUntil: 'load' });
  await page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
  return { page, problems };
}

describe('the UI sees what the CLI does', () => {
  it('a run the CLI writes appears in the open runs table without a reload', async () => {
    const { page, problems } = await open('/?view=runs');
    const rows = page.locator('tr[data-run-id]');
    const before = await rows.count();
    const id = synthRun(dataDir, { steps: 30, name: 'written by the CLI' });
    await waitUntil(
      'the CLI run in the open table',
      async () => (await page.locator(`tr[data-run-id="${id}"]`).count()) === 1,
      15_000,
      200,
    );
    expect(await rows.count()).toBe(before + 1);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a run page follows another process training a stopped run, then offers Resume for it', async () => {
    const other = await RunStore.open(dataDir);
    try {
      const run = await other.createRun({
        preset: 'sampo',
        env: 'sokoban',
        seed: 3,
        config: {},
        totalSteps: 8,
        name: 'stopped elsewhere',
        status: 'stopped',
      });
      await other.updateRun(run.id, { step: 6 });
      const { page, problems } = await open(`/?view=run&id=${run.id}`);
      const status = page.locator('[data-testid="run-detail"] .progress .status .label');
      await waitUntil('the stopped run page', async () => (await status.count()) === 1 && (await status.innerText()) === 'stopped', 20_000);
      expect(await page.locator('[data-testid="resume-run"]').count()).toBe(1);

      // Another process (arlarena resume) claims and trains it: the page follows, no reload.
      await other.claimRun(run.id);
      await other.updateRun(run.id, { status: 'running', step: 7 });
      await waitUntil(
        'the page to show it running at step 7',
        async () =>
          (await status.innerText()) === 'running' && (await page.locator('[data-testid="run-step"]').innerText()).startsWith('step 7'),
        15_000,
        200,
      );
      expect(await page.locator('[data-testid="resume-run"]').count()).toBe(0);
      await other.updateRun(run.id, { status: 'stopped' });
      await other.releaseRun(run.id);
      await waitUntil('the page to show it stopped again', async () => (await status.innerText()) === 'stopped', 15_000, 200);
      for (const dark of [false, true]) {
        await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
        await screenshot(page, `ui-live-store-resume-${dark ? 'dark' : 'light'}`);
      }

      // Resume in the UI: this app is asked to continue it (its config is empty, so the run then fails to
      // train, which the page shows as it would any outcome).
      const asked = page.waitForRequest((req) => req.url().endsWith('/api/call') && (req.postData() ?? '').includes('"sessions.resume"'));
      await page.click('[data-testid="resume-run"]');
      expect((await asked).postData()).toContain(run.id);
      await waitUntil('the run to leave "stopped"', async () => (await status.innerText()) !== 'stopped', 20_000, 200);
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      await other.close();
    }
  });
});

describe('notes on runs', () => {
  it('writes notes on a run page, keeps them across a reload and shows them in the runs table', async () => {
    const id = synthRun(dataDir, { steps: 20, name: 'noted run' });
    const { page, problems } = await open(`/?view=run&id=${id}`);
    const notes = page.locator('[data-testid="run-notes"]');
    await notes.waitFor({ timeout: 20_000 });
    await page.fill('[data-testid="run-notes-text"]', 'calm baseline; compare with lr 0.05');
    await page.click('[data-testid="run-notes-save"]');
    await waitUntil('the notes saved', async () => await page.locator('[data-testid="run-notes-save"]').isDisabled(), 10_000);
    await page.reload({ waitUntil: 'load' });
    await page.locator('[data-testid="run-notes-text"]').waitFor({ state: 'attached', timeout: 20_000 });
    await waitUntil(
      'the notes after a reload',
      async () => (await page.locator('[data-testid="run-notes-text"]').inputValue()) === 'calm baseline; compare with lr 0.05',
      10_000,
    );
    await page.goto(`${lab.origin}/?view=runs#token=${lab.token}`, { waitUntil: 'load' });
    const chip = page.locator(`tr[data-run-id="${id}"] [data-testid="run-note-chip"]`);
    await chip.waitFor({ timeout: 20_000 });
    expect(await chip.getAttribute('title')).toBe('calm baseline; compare with lr 0.05');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
