/**
 * Ray clusters in the app, in browser mode against a REAL Ray head (tests/support/ray.ts: ray[default]
 * from the peer venv, token auth on, 127.0.0.1, stopped by its pid at the end). No mock of the Jobs API.
 * - Cluster view: a bad address is named; a remote added with a pasted token tests as Ray 2.60.0 with its nodes,
 *   the token never shows again; a wrong token says it was refused.
 * - New run → "Run on" the remote → a tiny customised run trains as a Ray job (the app picks the tfjs rollout
 *   engine for it); the run page, the runs table and Compare show "on ray:head".
 * - Cluster view: the job is listed SUCCEEDED with its node and start time, its log opens; a second run's job is
 *   stopped with Stop and ends STOPPED, the run stopped.
 * Screenshots (light and dark): test-results/ui-cluster-{light,dark}.png.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRayHead, type RayHead } from '../tests/support/ray';
import { openLabSession, screenshot, type LabSession } from './support/browser';
import { TINY, setField, waitUntil } from './uiHelpers';

let head: RayHead;
let app: LabSession;
let page: Page;
let firstRun = '';
let secondRun = '';

async function openCluster(): Promise<void> {
  await page.click('nav a[data-nav="cluster"]');
  await page.waitForSelector('main[data-view="cluster"]');
}

async function runStatus(id: string): Promise<string> {
  const r = await app.lab.call('runs.get', { runId: id });
  return r.ok ? r.value.status : 'missing';
}

beforeAll(async () => {
  head = await startRayHead();
  app = await openLabSession({ path: '/?view=cluster' });
  page = app.page;
}, 180_000);

afterAll(async () => {
  await app?.close();
  await head?.stop();
}, 60_000);

describe('Ray clusters in the app', () => {
  it('adds a remote with a pasted token, tests it, and names a bad address and a wrong token', async () => {
    await page.waitForSelector('[data-testid="no-remotes"]');
    await page.fill('[data-testid="remote-name"]', 'head');
    await page.fill('[data-testid="remote-url"]', 'head:8265');
    await page.click('[data-testid="remote-add"]');
    await page.waitForSelector('[data-testid="add-error"][data-field="url"]');
    // `head:8265` parses as a URL of scheme "head:": the message says which schemes the dashboard is reached by.
    expect(await page.textContent('[data-testid="add-error"]')).toContain('reached over http:// or https://');

    await page.fill('[data-testid="remote-url"]', head.url);
    await page.fill('[data-testid="remote-token"]', head.token);
    await page.click('[data-testid="remote-add"]');
    const test = page.locator('[data-testid="test-head"]');
    await waitUntil('the new remote to be tested', async () => (await test.getAttribute('data-state')) === 'ok', 60_000);
    expect(await test.textContent()).toMatch(/Ray 2\.60\.0 · \d+ nodes? · CPUs/);
    expect(await page.locator('tr[data-remote="head"]').textContent()).toContain('stored');
    expect(await page.inputValue('[data-testid="remote-token"]')).toBe('');

    await page.fill('[data-testid="remote-name"]', 'wrong');
    await page.fill('[data-testid="remote-url"]', head.url);
    await page.fill('[data-testid="remote-token"]', 'f'.repeat(64));
    await page.click('[data-testid="remote-add"]');
    const wrong = page.locator('[data-testid="test-wrong"]');
    await waitUntil('the wrong-token remote to be tested', async () => (await wrong.getAttribute('data-state')) === 'error', 60_000);
    expect(await wrong.textContent()).toContain('refused the token');
    // Once added, the token is nowhere in the page (only "stored").
    expect(await page.content()).not.toContain(head.token);
    // The one with the wrong token goes (the confirm dialog says its token is deleted too).
    await page.locator('tr[data-remote="wrong"] button', { hasText: 'Remove' }).click();
    await page.locator('dialog[open] button', { hasText: 'Remove' }).click();
    await waitUntil('the wrong remote to go', async () => (await page.locator('tr[data-remote="wrong"]').count()) === 0, 10_000);
  });

  it('New run "Run on" the remote trains there; the run shows "on ray:head" on its page, in the runs table and Compare', async () => {
    await page.click('nav a[data-nav="new"]');
    await page.waitForSelector('main[data-view="new"]');
    const runOn = page.locator('[data-testid="run-on"]');
    await waitUntil('the remote to be offered', async () => (await runOn.locator('option[value="head"]').count()) === 1, 10_000);
    await runOn.selectOption('head');
    await page.check('input[name="env"][value="sokoban"]');
    await page.locator('[data-preset="grpo"] button', { hasText: 'Customise' }).click();
    await page.waitForSelector('[data-testid="config-editor"]');
    await page.locator('[data-testid="config-editor"] input[placeholder]').first().fill('grpo on Ray');
    // Each field once the editor has re-checked the last one: a re-check can fold a section again (it opens while a
    // field is bad), which under load raced the next field's unfolding.
    const checking = page.locator('[data-testid="config-editor"] header .muted');
    for (const [path, value] of Object.entries(TINY)) {
      await waitUntil('the editor to re-check', async () => !((await checking.textContent()) ?? '').includes('checking'), 30_000, 100);
      await setField(page, path, value);
    }
    const start = page.locator('[data-testid="start-custom"]');
    await waitUntil(
      'the customised config to validate',
      async () => (await start.isEnabled()) && (await page.locator('[data-testid="config-editor"] .err').count()) === 0,
      30_000,
    );
    await start.click();
    await page.waitForSelector('[data-testid="run-detail"]', { timeout: 60_000 });
    firstRun = (await page.locator('[data-testid="run-detail"]').getAttribute('data-run-id')) ?? '';
    expect(firstRun).not.toBe('');
    expect(await page.locator('[data-testid="run-detail"] [data-testid="target-chip"]').textContent()).toBe('on ray:head');

    await waitUntil(
      'the Ray run to end',
      async () => ['completed', 'failed', 'stopped'].includes(await runStatus(firstRun)),
      240_000,
      1000,
    );
    const rec = await app.lab.call('runs.get', { runId: firstRun });
    expect(rec.ok && rec.value.error).toBe(null);
    expect(rec.ok && rec.value.status).toBe('completed');
    // The Ray package carries onnxruntime-node, so the run rolls out on the same engine as a run trained here.
    expect(rec.ok && (rec.value.config.compute as { rolloutEngine: string }).rolloutEngine).toBe('onnxruntime');

    await page.click('nav a[data-nav="runs"]');
    const row = page.locator('tr', { has: page.locator(`a[href="?view=run&id=${firstRun}"]`) });
    await row.waitFor();
    expect(await row.locator('[data-testid="target-chip"]').textContent()).toBe('on ray:head');
    // The chip stands for the target tags: they are not shown again as plain tags.
    expect(await row.textContent()).not.toContain('ray-url:');
  }, 300_000);

  it('the Cluster view lists the job with its node and log, and Stop stops a running one', async () => {
    await openCluster();
    const job = page.locator(`[data-testid="jobs-head"] tr[data-job="${firstRun}"]`);
    await job.waitFor({ timeout: 30_000 });
    expect(await job.getAttribute('data-status')).toBe('SUCCEEDED');
    const cells = await job.locator('td').allTextContents();
    expect(cells[0]).toContain('grpo on Ray');
    expect(cells[2]).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(cells[3]).not.toBe('–');
    await job.locator('[data-testid="log-btn"]').click();
    const log = page.locator('[data-testid="job-log"]');
    await waitUntil('the job log to load', async () => Number(await log.getAttribute('data-lines')) > 0, 30_000);
    expect(await log.textContent()).toContain('@arlarena:');

    // A longer run, started through the API as the New run view does, stopped from the Cluster view.
    const started = await app.lab.call('sessions.start', {
      preset: 'grpo',
      env: 'sokoban',
      name: 'stopped on Ray',
      on: 'head',
      overrides: { ...TINY, 'training.steps': 200 },
    });
    if (!started.ok) throw new Error(started.error.message);
    secondRun = started.value.runId;
    const running = page.locator(`[data-testid="jobs-head"] tr[data-job="${secondRun}"][data-status="RUNNING"]`);
    await running.waitFor({ timeout: 120_000 });
    await waitUntil(
      'its first step to come back',
      async () => {
        const r = await app.lab.call('runs.get', { runId: secondRun });
        return r.ok && r.value.step >= 1;
      },
      180_000,
      1000,
    );
    await running.locator('[data-testid="stop-btn"]').click();
    await page.locator(`[data-testid="jobs-head"] tr[data-job="${secondRun}"][data-status="STOPPED"]`).waitFor({ timeout: 120_000 });
    await waitUntil('the run to be stopped', async () => (await runStatus(secondRun)) === 'stopped', 60_000, 500);
    expect(app.problems).toEqual([]);

    await screenshot(page, 'ui-cluster-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await waitUntil(
      'the dark theme',
      async () => (await page.evaluate(() => globalThis.matchMedia('(prefers-color-scheme: dark)').matches)) === true,
      5000,
      100,
    );
    await screenshot(page, 'ui-cluster-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  }, 420_000);

  it('Compare shows where each run trained', async () => {
    await page.goto(`${app.lab.origin}/?view=compare&runs=${firstRun},${secondRun}#token=${app.lab.token}`);
    const chips = page.locator('[data-testid="target-chip"]');
    await waitUntil('both runs in the summary table', async () => (await chips.count()) >= 2, 60_000);
    expect(await chips.allTextContents()).toEqual(['on ray:head', 'on ray:head']);
  }, 120_000);
});
