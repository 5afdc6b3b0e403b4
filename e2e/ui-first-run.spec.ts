/**
 * What a new user once met broken on a first run, against the real backend:
 *  - Compare with runs that share a name (the default names of `runs synth` did): no page error, and the
 *    "No baselines" note names all three runs on one line; new runs get unique default names;
 *  - a live run: the elapsed time ticks, the ETA is hidden while paused, the step-0 validation leaves no NaN
 *    marker (and no "No finite value logged" note) on the training charts, Stop answers at once;
 *  - the bundle download link carries no token, and still downloads.
 * Screenshots (light and dark) land in test-results/ui-first-run-*.png.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore, writeSyntheticRun } from '../src/main/store/index';
import { openLabSession, screenshot, type LabSession } from './support/browser';
import { type Lab } from './support/lab';
import { TINY, startCustomRun, waitUntil } from './uiHelpers';

let lab: Lab;
let app: LabSession;
let page: Page;
let dataDir = '';
const synthIds: string[] = [];

const RUN_TIMEOUT_MS = 600_000;

beforeAll(async () => {
  // Three synthetic runs written the way `arlarena runs synth` writes them, with their default names.
  dataDir = mkdtempSync(join(tmpdir(), 'arlarena-e2e-first-run-'));
  const store = await RunStore.open(dataDir);
  for (let k = 0; k < 3; k++) synthIds.push((await writeSyntheticRun(store, { steps: 60, shape: 'calm', seed: 1 })).id);
  await store.close();
  app = await openLabSession({ dataDir });
  ({ lab, page } = app);
});

afterAll(async () => {
  await app?.close();
  if (dataDir && !process.env.ARLARENA_E2E_KEEP_DATA) rmSync(dataDir, { recursive: true, force: true });
});

async function setTheme(dark: boolean): Promise<void> {
  await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
}

async function openCompare(ids: string[]): Promise<void> {
  await page.goto(`${lab.origin}/?view=compare&runs=${ids.join(',')}#token=${lab.token}`);
  await page.waitForSelector('[data-testid="compare"][data-rendered="true"]', { timeout: 60_000 });
}

async function storedSteps(runId: string, key: string): Promise<number[]> {
  const r = await lab.call('runs.metrics', { runIds: [runId], keys: [key], xAxis: 'step' });
  return r.ok ? (r.value[0]?.steps ?? []) : [];
}

async function status(runId: string): Promise<string> {
  const r = await lab.call('runs.get', { runId });
  return r.ok ? r.value.status : `error: ${r.error.message}`;
}

describe('what a new user hits', () => {
  it('gives new runs unique, telling default names (preset, env, seed, short id)', async () => {
    const names = await Promise.all(
      synthIds.map(async (runId) => {
        const r = await lab.call('runs.get', { runId });
        if (!r.ok) throw new Error(r.error.message);
        return r.value.name;
      }),
    );
    expect(new Set(names).size).toBe(3);
    for (const [i, n] of names.entries()) {
      expect(n).toContain('seed 1');
      expect(n).toContain('sokoban');
      expect(n).toContain(synthIds[i].slice(-6));
    }
    await openCompare(synthIds);
    const rows = await page.locator('[data-testid="summary-table"] tbody tr td:first-child').allInnerTexts();
    expect(new Set(rows.map((t) => t.trim())).size).toBe(3);
    await screenshot(page, 'ui-first-run-compare-default-names-light');
    await setTheme(true);
    await screenshot(page, 'ui-first-run-compare-default-names-dark');
    await setTheme(false);
    expect(app.problems).toEqual([]);
  });

  it('compares runs that share a name without a page error, the no-baselines reason said once for all three', async () => {
    // A user may still name runs alike (and stored runs keep their old default names): key by id, not name.
    for (const runId of synthIds) expect((await lab.call('runs.rename', { runId, name: 'synthetic calm (60 steps)' })).ok).toBe(true);
    for (const dark of [false, true]) {
      await setTheme(dark);
      await openCompare(synthIds);
      const lines = page.locator('[data-testid="no-baselines"] li');
      // One reason (synthetic: no environment) for the three runs: one line naming each by its short id, in
      // muted text rather than as an error, since a synthetic run cannot have baselines.
      await waitUntil('the baselines line', async () => (await lines.count()) === 1, 60_000);
      const text = await lines.first().innerText();
      for (const runId of synthIds) expect(text).toContain(runId.slice(-6));
      expect(text).toMatch(/^No baselines for .*: synthetic demo curves, with no environment to play the random and expert policies on\.$/);
      await waitUntil(
        'the n/a baseline cells',
        async () => (await page.locator('[data-testid="summary-table"] td[data-col="random"]').allInnerTexts()).every((t) => t === 'n/a'),
        60_000,
      );
      expect(await page.locator('[data-testid="baseline-errors"]').count()).toBe(0);
      expect(await page.locator('[data-testid="summary-table"] tbody tr').count()).toBe(3);
      await screenshot(page, `ui-first-run-compare-same-names-${dark ? 'dark' : 'light'}`);
    }
    await setTheme(false);
    expect(app.problems).toEqual([]);
  });

  it('downloads an exported bundle through a link that carries no token', async () => {
    await page.goto(`${lab.origin}/?view=run&id=${synthIds[0]}#token=${lab.token}`);
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${synthIds[0]}"]`);
    // A synthetic run cannot have baselines: the held-out panel says so quietly, with no error and no Retry.
    const noBase = page.locator('[data-testid="run-no-baselines"]');
    await noBase.waitFor({ timeout: 30_000 });
    expect(await noBase.innerText()).toMatch(/^No baselines: synthetic demo curves/);
    expect(await page.locator('[data-testid="run-baselines-error"]').count()).toBe(0);
    // Nor will it ever store episodes: the viewer says so rather than "they appear as the run progresses".
    expect(await page.locator('[data-testid="no-episodes"]').innerText()).toBe(
      'This run stored no sampled episodes. Synthetic runs are curves only.',
    );
    await page.click('[data-testid="export-bundle"]');
    const result = page.locator('[data-testid="export-result"]');
    await result.waitFor({ timeout: 60_000 });
    const link = result.locator('a', { hasText: 'Download' });
    const href = (await link.getAttribute('href')) ?? '';
    expect(href).not.toContain(lab.token);
    expect(href).not.toContain('token');
    // The link alone (no token header) is refused; so is the long-lived token in the query string.
    const bare = await fetch(new URL(href, lab.origin));
    expect(bare.status).toBe(401);
    const withQuery = await fetch(new URL(`${href}${href.includes('?') ? '&' : '?'}token=${lab.token}`, lab.origin));
    expect(withQuery.status).toBe(401);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const bytes = readFileSync((await download.path())!);
    expect(bytes.length).toBeGreaterThan(100);
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(download.suggestedFilename()).toMatch(/\.zip$/);
    await screenshot(page, 'ui-first-run-export-light');
    await setTheme(true);
    await screenshot(page, 'ui-first-run-export-dark');
    await setTheme(false);
    expect(app.problems).toEqual([]);
  });

  it(
    'shows a live run honestly: elapsed ticks, no NaN mark from the step-0 validation, no ETA while paused, Stop answers at once',
    async () => {
      const runId = await startCustomRun(page, {
        preset: 'sampo',
        env: 'sokoban',
        name: 'e2e live',
        // Long enough that Pause lands mid-run on native TensorFlow too (six tiny steps could end first there);
        // the test stops the run itself.
        overrides: { ...TINY, 'training.steps': '40', 'training.validateEvery': '3' },
      });
      const elapsed = page.locator('[data-testid="run-detail"] .progress span', { hasText: 'elapsed' });
      const seconds = async (): Promise<number> => {
        const t = await elapsed.innerText();
        const m = /(?:(\d+) min )?(\d+) s elapsed/.exec(t);
        if (!m) throw new Error(`unexpected elapsed text "${t}"`);
        return Number(m[1] ?? 0) * 60 + Number(m[2]);
      };
      // The clock runs from the start (behaviour cloning included), between status events too.
      await waitUntil('the elapsed time to pass 2 s', async () => (await seconds()) >= 2, 120_000, 250);
      const a = await seconds();
      await waitUntil('the elapsed time to keep counting', async () => (await seconds()) > a, 15_000, 250);

      // The step-0 validation logs val/* at step 0 and NaN for every training metric ("not applicable").
      const success = page.locator('.chart-card[data-metric="episode/success_rate"]');
      await waitUntil(
        'the step-0 validation to be stored',
        async () => (await storedSteps(runId, 'val/success_rate')).length >= 1,
        RUN_TIMEOUT_MS,
      );
      await waitUntil(
        'the first training step to stream in',
        async () => Number(await success.getAttribute('data-points')) >= 1,
        RUN_TIMEOUT_MS,
      );
      const cards = page.locator('[data-testid="run-detail"] .chart-card');
      for (const card of await cards.all()) {
        const key = await card.getAttribute('data-metric');
        expect(await card.getAttribute('data-nonfinite'), `${key}: NaN markers`).toBe('0');
        expect(await card.locator('.nodata', { hasText: 'No finite value' }).count(), `${key}: "No finite value logged"`).toBe(0);
      }
      // Training charts start at step 1: the step-0 record has no training value for them.
      expect((await storedSteps(runId, 'episode/success_rate'))[0]).toBe(1);
      await screenshot(page, 'ui-first-run-live-light');
      await setTheme(true);
      await screenshot(page, 'ui-first-run-live-dark');
      await setTheme(false);

      // Paused: no ETA, and the elapsed time stands still.
      await page.locator('[data-testid="run-detail"] .controls button', { hasText: 'Pause' }).click();
      await page.locator('[data-testid="run-detail"] .controls button', { hasText: 'Resume' }).waitFor({ timeout: 15_000 });
      expect(await page.locator('[data-testid="run-detail"] .progress').innerText()).not.toMatch(/left/);
      const p1 = await seconds();
      await new Promise((r) => setTimeout(r, 2500));
      expect(await seconds()).toBe(p1);
      await screenshot(page, 'ui-first-run-paused-light');
      await setTheme(true);
      await screenshot(page, 'ui-first-run-paused-dark');
      await setTheme(false);
      await page.locator('[data-testid="run-detail"] .controls button', { hasText: 'Resume' }).click();
      await waitUntil('the run to be running again', async () => (await status(runId)) === 'running', 30_000);

      // Stop: feedback in the same breath, the button disabled until the run has stopped.
      const stop = page.locator('[data-testid="run-detail"] .controls button.danger');
      const clicked = Date.now();
      await stop.click();
      await waitUntil(
        '"Stopping…" on the Stop button',
        async () => (await stop.innerText()).includes('Stopping…') && (await stop.isDisabled()),
        1000,
        50,
      );
      const feedbackMs = Date.now() - clicked;
      await waitUntil('the run to stop', async () => ['stopped', 'completed'].includes(await status(runId)), 120_000, 100);
      console.info(`Stop: feedback after ${feedbackMs} ms, run ${await status(runId)} after ${Date.now() - clicked} ms`);
      await screenshot(page, 'ui-first-run-stopped-light');
      await setTheme(true);
      await screenshot(page, 'ui-first-run-stopped-dark');
      await setTheme(false);
      expect(app.problems).toEqual([]);
    },
    RUN_TIMEOUT_MS + 120_000,
  );
});
