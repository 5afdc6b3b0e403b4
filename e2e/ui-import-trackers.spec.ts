/**
 * Trackers' runs through the UI, on folders the trackers' own SDKs wrote (tests/peers/trackers_peer.py in the
 * `trackers` venv, offline: wandb 0.31 — a finished, a crashed, a failed and a resumed run, the last as two .wandb
 * files in two run folders —, MLflow's file store and its SQLite store, three runs each):
 * - Import folder… on the folder finds the tracker files by their content (the .wandb logs, the database, the
 *   MLflow runs' meta.yaml and everything below them), sends them together, and the import panel says how many
 *   runs of which tracker were found: "4 W&B runs, 6 MLflow runs"; the runs table lists them by their trackers'
 *   run names; other files of the folder (W&B's debug logs, config files) are left out and counted. W&B's links
 *   stay in the folder (wandb/latest-run → the newest run folder, debug.log, debug-internal.log): the newest run
 *   comes once, neither lost nor doubled;
 * - the same folder dragged from the desktop onto the runs table (Chromium's own drag of the real folder) finds
 *   the same runs, each one "already imported";
 * - a .wandb file dropped on the table on its own imports as its W&B run and the panel says "1 W&B run" (the
 *   same run as before: "already imported");
 * - run folders an older W&B client (before 0.10) left — wandb-history.jsonl, wandb-summary.json, config.yaml, no
 *   .wandb file — are found by content too: wandb 0.9.7 writes them (tests/peers/wandb_old_peer.py in the
 *   `wandb-old` venv, dry-run mode).
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { venvPython } from '../tests/support/peers';
import { launchBrowser, screenshot } from './support/browser';
import { ROOT, startLab, type Lab } from './support/lab';
import { waitUntil } from './uiHelpers';

let work = '';
let src = '';
let lab: Lab;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-trackers-e2e-'));
  src = join(work, 'cluster-job');
  execFileSync(
    venvPython('trackers'),
    [join(ROOT, 'tests', 'peers', 'trackers_peer.py'), 'write', src, '--only', 'wandb,mlflow-file,mlflow-sqlite'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 240_000,
      env: { ...process.env, WANDB_MODE: 'offline' },
    },
  );
  // The peer's own answer key is not part of what a user would pick.
  rmSync(join(src, 'expected.json'), { force: true });
  lab = await startLab({ dataDir: join(work, 'data') });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  await page.goto(`${lab.origin}/?view=runs#token=${lab.token}`, { waitUntil: 'load' });
  await page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await lab?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

const items = () => page.locator('[data-testid="import-item"]');

async function settled(count: number): Promise<void> {
  await waitUntil(
    `${count} import item(s) to settle`,
    async () =>
      (await items().count()) === count && (await page.locator('[data-testid="import-item"][data-state="sending"]').count()) === 0,
    120_000,
    250,
  );
}

/** Every file under `dir`, links not followed (wandb/latest-run links to a run folder already listed). */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) out.push(...filesUnder(p));
    else if (st.isFile()) out.push(p);
  }
  return out;
}

/**
 * Drags the folder `dir` from the desktop onto `selector`: Chromium's own drag (DevTools Input.dispatchDragEvent)
 * of the real folder, so the page walks it with Chromium's listing as it would a user's drop.
 */
async function dragFolder(selector: string, dir: string): Promise<void> {
  const box = await page.locator(selector).boundingBox();
  if (!box) throw new Error(`${selector} is not on the page`);
  const cdp = await page.context().newCDPSession(page);
  const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const data = { items: [], files: [dir], dragOperationsMask: 1 };
  for (const type of ['dragEnter', 'dragOver', 'drop'] as const) await cdp.send('Input.dispatchDragEvent', { type, ...at, data });
  await cdp.detach();
}

/**
 * Import folder… on `dir`. Import folder… asks showDirectoryPicker for the folder; Playwright cannot answer that
 * dialog (Chromium aborts a picker it intercepts), so the page's picker answers the handle of the real folder,
 * which Chromium gives for that folder dragged onto the page (caught before the app sees the drop): the app
 * walks what Chromium lists, only the dialog is left out.
 */
async function pickFolder(dir: string): Promise<void> {
  await page.evaluate(() => {
    type Item = DataTransferItem & { getAsFileSystemHandle(): Promise<unknown> };
    const w = window as unknown as { showDirectoryPicker?: () => Promise<unknown> };
    const hold = (e: Event) => {
      e.preventDefault();
      e.stopImmediatePropagation();
    };
    const handle = new Promise<unknown>((resolve, reject) => {
      const onDrop = (e: DragEvent) => {
        hold(e);
        for (const t of ['dragenter', 'dragover', 'drop'])
          window.removeEventListener(t, t === 'drop' ? (onDrop as EventListener) : hold, true);
        (e.dataTransfer!.items[0] as Item).getAsFileSystemHandle().then(resolve, reject);
      };
      window.addEventListener('dragenter', hold, true);
      window.addEventListener('dragover', hold, true);
      window.addEventListener('drop', onDrop as EventListener, true);
    });
    w.showDirectoryPicker = () => handle;
  });
  await dragFolder('[data-testid="drop-target"]', dir);
  await page.locator('[data-testid="import-folder-button"]').click();
}

describe("trackers' runs through Import folder and drag-and-drop (folders written by the W&B and MLflow SDKs)", () => {
  it('Import folder… on a cluster job folder: "found 4 W&B runs, 6 MLflow runs", each run in the table by its name', async () => {
    const wandbFiles = filesUnder(join(src, 'wandb')).filter((f) => f.endsWith('.wandb'));
    // The resumed run is two logs in two run folders: five .wandb files, four W&B runs.
    expect(wandbFiles).toHaveLength(5);
    // W&B links wandb/latest-run (and debug.log, debug-internal.log) to the newest run folder; they stay.
    expect(lstatSync(join(src, 'wandb', 'latest-run')).isSymbolicLink()).toBe(true);
    await pickFolder(src);
    await settled(1);
    const item = items().first();
    const text = await item.innerText();
    expect(await item.getAttribute('data-state'), text).toBe('imported');
    expect(await item.locator('[data-testid="import-trackers"]').innerText()).toBe('found 4 W&B runs, 6 MLflow runs');
    expect(await item.locator('[data-run-link]').count()).toBe(10);
    // W&B's debug logs, config.yaml / requirements files and the like are not sent.
    expect(await page.locator('[data-testid="import-note"]').innerText()).toMatch(
      /^\d+ file\(s\) of the folder are not TensorBoard event files/,
    );
    await screenshot(page, 'ui-import-trackers-folder');

    const runs = await lab.call('runs.list', {});
    if (!runs.ok) throw new Error(runs.error.message);
    const names = runs.value.map((r) => r.name).sort();
    expect(names).toEqual(['crashed', 'failed', 'finished', 'grpo-a', 'grpo-a', 'grpo-b', 'grpo-b', 'ppo-c', 'ppo-c', 'resumed']);
    const resumed = runs.value.find((r) => r.name === 'resumed')!;
    // Both logs of the resumed run are one run with every step (0–5 from the first process, 6–9 from the second).
    expect(resumed.step).toBe(9);
    const row = page.locator(`tbody tr[data-run-id="${resumed.id}"]`);
    await row.waitFor({ timeout: 15_000 });
    expect(await row.innerText()).toContain('resumed');
  });

  it('the same folder dragged onto the table, links and all: the same runs, each already imported', async () => {
    await page.locator('[aria-label="Close the import results"]').click();
    expect(lstatSync(join(src, 'wandb', 'latest-run')).isSymbolicLink()).toBe(true);
    await dragFolder('[data-testid="drop-target"]', src);
    await settled(1);
    const item = items().first();
    expect(await item.getAttribute('data-state'), await item.innerText()).toBe('duplicate');
    // "already imported as" each of the ten runs: the newest W&B run came (its resumed log whole), none twice.
    expect(await item.locator('[data-run-link]').count()).toBe(10);
    const runs = await lab.call('runs.list', {});
    if (!runs.ok) throw new Error(runs.error.message);
    expect(runs.value).toHaveLength(10);
  });

  it('a .wandb file dropped on its own: "found 1 W&B run", and the same run again is "already imported"', async () => {
    await page.locator('[aria-label="Close the import results"]').click();
    const file = filesUnder(join(src, 'wandb')).find((f) => f.includes('peerfin1') && f.endsWith('.wandb'))!;
    const data = readFileSync(file).toString('base64');
    const dt = await page.evaluateHandle(
      ({ b64, name }) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const d = new DataTransfer();
        d.items.add(new File([bytes], name));
        return d;
      },
      { b64: data, name: 'run-peerfin1.wandb' },
    );
    const target = '[data-testid="drop-target"]';
    await page.dispatchEvent(target, 'dragenter', { dataTransfer: dt });
    await page.dispatchEvent(target, 'dragover', { dataTransfer: dt });
    await page.dispatchEvent(target, 'drop', { dataTransfer: dt });
    await settled(1);
    const item = items().first();
    // Imported from the folder already (same file, same W&B run): reported, not imported twice.
    expect(await item.getAttribute('data-state'), await item.innerText()).toBe('duplicate');
    await item.locator('[data-testid="import-again"]').click();
    await waitUntil('the copy', async () => (await items().first().getAttribute('data-state')) === 'imported', 60_000, 250);
    expect(await items().first().locator('[data-testid="import-trackers"]').innerText()).toBe('found 1 W&B run');
    expect(await items().first().innerText()).toMatch(/imported 12 steps \(wandb[;)].* as finished/);
  });

  it("an older W&B client's run folders (wandb 0.9.7 wrote them, dry-run) are found by content", async () => {
    await page.locator('[aria-label="Close the import results"]').click();
    const old = join(work, 'old-job');
    execFileSync(venvPython('wandb-old'), [join(ROOT, 'tests', 'peers', 'wandb_old_peer.py'), 'write', old], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 240_000,
    });
    rmSync(join(old, 'expected.json'), { force: true });
    await page.setInputFiles('[data-testid="import-folder-input"]', old);
    await settled(1);
    const item = items().first();
    expect(await item.getAttribute('data-state'), await item.innerText()).toBe('imported');
    expect(await item.locator('[data-testid="import-trackers"]').innerText()).toBe('found 3 W&B runs');
    expect(await item.innerText()).toMatch(/imported 21 steps \(wandb-files\) as /);
    const runs = await lab.call('runs.list', {});
    if (!runs.ok) throw new Error(runs.error.message);
    const fin = runs.value.find((r) => r.name === 'grpo-finished');
    expect(fin?.step).toBe(11);
    const rec = await lab.call('runs.get', { runId: fin!.id });
    if (!rec.ok) throw new Error(rec.error.message);
    expect(rec.value.config).toMatchObject({
      algorithm: { adv_estimator: 'grpo' },
      trainer: { experiment_name: 'grpo-finished', seed: null },
    });
  });
});
