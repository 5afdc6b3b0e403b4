/**
 * "Follow a log…" on what is no training log, or not one yet:
 * - a PNG is refused at once with the reason (no run is made that sits at "detecting · step 0" forever);
 * - a verl log that has printed its config but no step yet: the run page says it waits for the first step, shows
 *   the config the log printed, and its episodes panel says imported logs carry no episodes (not that "the
 *   trainer stores a few per step"); the first steps then arrive live.
 * On the shared real verl Qwen2-7B console log where ../shared/data/real-runs is present (its head up to its first
 * step), otherwise on a verl console log written here.
 * - a Trackio database its own writer (tests/peers/trackers_peer.py, trackio 0.43 in the `trackers` venv) is still
 *   logging to: followed as the CLI follows it, polled read-only; the run opens, its steps and the detector's alert
 *   arrive live, and Stop following ends it while the writer carries on undisturbed.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../tests/support/peers';
import { realRun } from '../tests/support/realRuns';
import { launchBrowser, screenshot } from './support/browser';
import { ROOT, startLab, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

const REAL = realRun('verl-console/play-verl_verl_qwen2_7b_min.log');
const PNG = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'), Buffer.alloc(300, 0xf7)]);

let work = '';
let lab: Lab;
let browser: Browser;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-follow-start-e2e-'));
  lab = await startLab({ dataDir: join(work, 'data'), serveArgs: ['--allow-dir', work] });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await lab?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function open(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${lab.origin}/?view=runs#token=${lab.token}`, { waitUntil: 'load' });
  await page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
  return { page, problems };
}

async function follow(page: Page, path: string): Promise<void> {
  await page.click('[data-testid="follow-button"]');
  const dialog = page.locator('dialog[open]');
  await dialog.locator('input[name="value"]').fill(path);
  await dialog.locator('button[type="submit"]').click();
}

describe(`Follow a log… (${REAL ? 'the shared real verl Qwen2-7B console log' : 'NOT the shared real logs (../shared/data/real-runs is absent): a verl console log written by the test'})`, () => {
  it('refuses a PNG at once, saying it is in no known format, and makes no run', async () => {
    const { page, problems } = await open();
    const png = join(work, 'reward-curve.png');
    writeFileSync(png, PNG);
    await follow(page, png);
    const toast = page.locator('[data-testid="api-error"]');
    await toast.first().waitFor({ timeout: 15_000 });
    const said = await toast.first().innerText();
    expect(said).toMatch(/reward-curve\.png is in no known format/);
    // In words: what failed, then the reason; the API method and code only as small print.
    expect(await toast.first().locator('[data-testid="api-error-headline"]').innerText()).toBe('Could not follow the log');
    expect(await toast.first().locator('[data-testid="api-error-message"]').innerText()).toMatch(
      /nothing was followed.* \(about the field path\)$/s,
    );
    await screenshot(page, 'ui-follow-start-refused');
    const runs = await lab.call('runs.list', {});
    expect(runs.ok && runs.value.length).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('From a path… on a file that is not there says so, without offering "Import as <format>"', async () => {
    const { page, problems } = await open();
    await page.click('[data-testid="import-path-button"]');
    const dialog = page.locator('dialog[open]');
    await dialog.locator('input[name="value"]').fill(join(work, 'no-such-file.log'));
    await dialog.locator('button[type="submit"]').click();
    const item = page.locator('[data-testid="import-item"]');
    await waitUntil('the refusal', async () => (await item.count()) === 1 && (await item.getAttribute('data-state')) === 'refused', 15_000);
    expect(await item.innerText()).toMatch(/no such file/i);
    expect(await item.locator('[data-testid="import-as"]').count()).toBe(0);
    // A file that is there but in no known format still offers it.
    const odd = join(work, 'odd.log');
    writeFileSync(odd, 'x'.repeat(70 * 1024));
    await page.click('[data-testid="import-path-button"]');
    await page.locator('dialog[open] input[name="value"]').fill(odd);
    await page.locator('dialog[open] button[type="submit"]').click();
    const oddItem = item.filter({ hasText: 'odd.log' });
    // The format picker appears once the panel's format list (catalog.importFormats, asked for when the panel opens)
    // has arrived; on a loaded machine that can be after the refusal is drawn, so wait for both.
    await waitUntil(
      'the second refusal, offering "Import as <format>"',
      async () =>
        (await oddItem.count()) === 1 &&
        (await oddItem.getAttribute('data-state')) === 'refused' &&
        (await oddItem.locator('[data-testid="import-as"]').count()) === 1,
      15_000,
    );
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a log with its config and no step yet: "waiting for the first step", its config shown, no episode promise', async () => {
    const text = REAL
      ? readFileSync(REAL, 'utf8')
      : `(main_task pid=1) {'algorithm': {'adv_estimator': 'gae'}, 'data': {'train_files': '~/data/gsm8k/train.parquet'}}\n(main_task pid=1) step:1 - actor/entropy_loss:0.3 - critic/score/mean:0.3\n(main_task pid=1) step:2 - actor/entropy_loss:0.29 - critic/score/mean:0.4\n(main_task pid=1) step:3 - actor/entropy_loss:0.28 - critic/score/mean:0.5\n`;
    const first = text.indexOf('step:1 -');
    const head = REAL ? text.slice(0, text.lastIndexOf('\n', first) + 1) : text.slice(0, text.indexOf('\n') + 1);
    const path = join(work, 'train.log');
    writeFileSync(path, head);
    const { page, problems } = await open();
    await follow(page, path);
    await page.locator('[data-testid="stop-following"]').waitFor({ timeout: 20_000 });
    const detail = page.locator('[data-testid="follow-detail"]');
    expect(await detail.innerText()).toMatch(/waiting for the first step/);
    await waitUntil(
      'the config the log printed',
      async () => (await page.locator('[data-testid="run-config"] code', { hasText: 'algorithm.adv_estimator' }).count()) > 0,
      20_000,
    );
    const episodes = page.locator('[data-testid="trajectory-viewer"]');
    await episodes.scrollIntoViewIfNeeded();
    expect(await episodes.innerText()).toMatch(/Imported training logs carry metrics, not episodes/);
    expect(await episodes.innerText()).not.toMatch(/trainer stores a few per step/);
    for (const dark of [false, true]) {
      await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
      await screenshot(page, `ui-follow-start-waiting-${dark ? 'dark' : 'light'}`);
    }
    appendFileSync(path, text.slice(head.length, REAL ? text.indexOf('step:4 -') : text.length));
    await waitUntil(
      'the first steps to arrive',
      async () => /^step [1-9]/.test(await page.locator('[data-testid="run-step"]').innerText()),
      30_000,
    );
    await page.click('[data-testid="stop-following"]');
    await waitUntil('following to stop', async () => (await page.locator('[data-testid="stop-following"]').count()) === 0, 15_000);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a Trackio database being written: its run opens, steps and the alert arrive live, Stop following ends it', async () => {
    const target = join(work, 'trackio');
    const db = join(target, 'arl-live.db');
    // 30 steps, one every 0.5 s: still writing while the page follows it.
    const writer = spawn(
      venvPython('trackers'),
      [join(ROOT, 'tests', 'peers', 'trackers_peer.py'), 'slow-write', 'trackio', target, '30', '0.5'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    const exited = new Promise<number | null>((res) => writer.on('exit', (code) => res(code)));
    try {
      await new Promise<void>((res, rej) => {
        writer.stdout.on('data', (d: Buffer) => {
          if (String(d).includes('started')) res();
        });
        void exited.then((code) => rej(new Error(`the Trackio writer exited (${code}) before its first step`)));
      });
      // Trackio's background thread writes the first row a moment after the log call.
      await waitUntil(
        'the database',
        async () => {
          try {
            return readFileSync(db).subarray(0, 15).toString() === 'SQLite format 3';
          } catch {
            return false;
          }
        },
        15_000,
      );
      const { page, problems } = await open();
      await follow(page, db);
      const stop = page.locator('[data-testid="stop-following"]');
      await stop.waitFor({ timeout: 20_000 });
      expect(await stop.getAttribute('title')).toMatch(/database/);
      await waitUntil(
        'the poll named as following the database',
        async () => /polled read-only/.test(await page.locator('[data-testid="follow-detail"]').innerText()),
        20_000,
      );
      expect(await page.getByText('new steps appear as the database gains rows (polled read-only)').count()).toBe(1);
      let writing = true;
      void exited.then(() => (writing = false));
      await waitUntil(
        'steps while the writer writes',
        async () => /^step [1-9]/.test(await page.locator('[data-testid="run-step"]').innerText()),
        30_000,
      );
      // The writer's NaN grad norm at step 3: raised on the followed run as it arrives.
      await page.locator('[data-testid="run-alerts"] li').first().waitFor({ timeout: 30_000 });
      expect(writing).toBe(true);
      await screenshot(page, 'ui-follow-start-trackio');
      await stop.click();
      await waitUntil('following to stop', async () => (await stop.count()) === 0, 15_000);
      const runs = await lab.call('runs.list', {});
      if (!runs.ok) throw new Error(runs.error.message);
      const run = runs.value.find((r) => r.name === 'live');
      expect(run).toMatchObject({ status: 'completed' });
      // The writer was never locked out: it logs its remaining steps and finishes.
      expect(await exited).toBe(0);
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      writer.kill();
    }
  });
});
