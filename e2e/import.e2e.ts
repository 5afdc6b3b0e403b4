/**
 * External training logs through the UI and the detector on a stored run, against the
 * real backend in browser mode:
 * - a verl console log (written here: Ray prefixes, ANSI colours, noise lines, a policy loss that turns NaN)
 *   imported with the Import button shows in the runs table, opens on its charts, its source and key mapping,
 *   and carries the alert the NaN deserves;
 * - the same file dropped on the table is "already imported", and "import again" makes a second run;
 * - a reproducibility bundle still imports through the same button;
 * - a file in no known format is refused with the importer's message, and one the user knows the format of
 *   imports as that format;
 * - a real verl log from ../shared/data/real-runs (when present) imports through the same button;
 * - a folder of event files written by TensorBoard's own writer imports with Import folder, one run per file,
 *   and the same folder given by its path ("From a path") is already imported;
 * - a log that is still being written is followed live and stopped;
 * - a synthetic collapse run (`arlarena runs synth`) holds no alert until "Run detector" raises them.
 * Screenshots (light and dark) of the import panel and the imported run view land in test-results/.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realRun } from '../tests/support/realRuns';
import { peerPython } from '../tests/support/peers';
import { openLabSession, screenshot, screenshotThemes, type LabSession } from './support/browser';
import { ROOT, synthRun, type Lab } from './support/lab';
import { gotoView, waitUntil } from './uiHelpers';

let lab: Lab;
let app: LabSession;
let page: Page;
let dataDir = '';
let work = '';
let synthId = '';

const STEPS = 40;
const NAN_FROM = 31;

/**
 * One verl console line per step as verl's console logger prints it under Ray: the TaskRunner prefix in ANSI
 * cyan, `step:N - key:value - …`. The policy loss turns NaN from NAN_FROM on (a numerically broken update).
 */
function verlLine(s: number): string {
  const v: Record<string, string> = {
    'actor/entropy': (0.6 - s * 0.005).toFixed(4),
    'actor/pg_loss': s >= NAN_FROM ? 'nan' : (0.05 - s * 0.001).toFixed(5),
    'actor/pg_clipfrac': (0.002 + (s % 4) * 0.0005).toFixed(5),
    'actor/ppo_kl': (0.0004 + (s % 3) * 0.0001).toFixed(6),
    'actor/grad_norm': (0.8 + (s % 5) * 0.05).toFixed(3),
    'critic/score/mean': Math.min(0.9, 0.05 + s * 0.02).toFixed(4),
    'critic/vf_explained_var': (-2 + s * 0.05).toFixed(3),
    'response_length/mean': (180 + (s % 7)).toFixed(1),
    'timing_s/gen': (12.5 + (s % 2)).toFixed(2),
  };
  return `\x1b[36m(TaskRunner pid=48213)\x1b[0m step:${s} - ${Object.entries(v)
    .map(([k, x]) => `${k}:${x}`)
    .join(' - ')}`;
}

function verlLog(from: number, to: number): string {
  const out = [
    '\x1b[36m(TaskRunner pid=48213)\x1b[0m Training Progress:   0%|          | 0/40 [00:00<?, ?it/s]',
    '(TaskRunner pid=48213) WARNING: the first steps are slow while kernels compile',
  ];
  for (let s = from; s <= to; s++) out.push(verlLine(s));
  return `${out.join('\n')}\n`;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-import-e2e-'));
  dataDir = join(work, 'data');
  // A stored run the live detector never saw: its alerts exist only once someone runs the detector.
  synthId = synthRun(dataDir, { steps: 120, shape: 'cispo_collapse', seed: 3, name: 'synthetic collapse' });
  // Import and follow by path read only inside folders the user allowed (serve --allow-dir): allow this test's.
  app = await openLabSession({ dataDir, serveArgs: ['--allow-dir', work] });
  ({ lab, page } = app);
});

afterAll(async () => {
  await app?.close();
  if (work && !process.env.ARLARENA_E2E_KEEP_DATA) rmSync(work, { recursive: true, force: true });
});

/** Light and dark screenshots of the page as it is now. */
const shots = (name: string): Promise<void> => screenshotThemes(page, name);

const items = () => page.locator('[data-testid="import-item"]');

async function lastItemSettled(): Promise<{ state: string; text: string }> {
  await waitUntil(
    'the import to finish',
    async () => (await items().count()) > 0 && (await items().last().getAttribute('data-state')) !== 'sending',
    60_000,
    200,
  );
  return { state: (await items().last().getAttribute('data-state')) ?? '', text: await items().last().innerText() };
}

/** Drops a file on the runs table the way a browser delivers it (a DataTransfer carrying a File). */
async function dropFile(name: string, content: string): Promise<void> {
  const target = '[data-testid="drop-target"]';
  const dt = await page.evaluateHandle(
    ({ n, c }) => {
      const d = new DataTransfer();
      d.items.add(new File([c], n, { type: 'text/plain' }));
      return d;
    },
    { n: name, c: content },
  );
  await page.dispatchEvent(target, 'dragenter', { dataTransfer: dt });
  await page.dispatchEvent(target, 'dragover', { dataTransfer: dt });
  expect(await page.locator(target).getAttribute('data-over')).toBe('true');
  await screenshot(page, 'ui-import-drop-target');
  await page.dispatchEvent(target, 'drop', { dataTransfer: dt });
}

async function waitForCharts(): Promise<void> {
  const undrawn = page.locator('.chart-card .chart[data-drawn="true"][data-rendered="false"], .chart-card .chart[data-pending="true"]');
  await waitUntil(
    'the charts to be drawn',
    async () => (await page.locator('.chart-card').count()) > 0 && (await undrawn.count()) === 0,
    30_000,
    100,
  );
}

describe('importing training logs through the UI', () => {
  const logText = verlLog(1, STEPS);
  let runId = '';

  it('imports a verl console log with the Import button and lists it in the table', async () => {
    await gotoView(page, 'runs');
    await page.setInputFiles('[data-testid="import-input"]', {
      name: 'verl_grpo_qwen.log',
      mimeType: 'text/plain',
      buffer: Buffer.from(logText),
    });
    const { state, text } = await lastItemSettled();
    expect(state, text).toBe('imported');
    expect(text).toContain(`imported ${STEPS} steps (verl-console`);
    runId = (await items().last().locator('[data-run-link]').first().getAttribute('data-run-link')) ?? '';
    expect(runId).not.toBe('');
    const row = page.locator(`tbody tr[data-run-id="${runId}"]`);
    await row.waitFor({ timeout: 15_000 });
    expect(await row.innerText()).toContain('imported');
    // The NaN loss raised an alert at import, shown in the table's Alerts column.
    expect(await row.locator('.alerts').count()).toBe(1);
    await shots('ui-import-panel');
  });

  it('opens the imported run on its charts, its source, the key mapping and its alert', async () => {
    await items().last().locator(`[data-run-link="${runId}"]`).click();
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${runId}"]`);
    const source = page.locator('[data-testid="run-source"]');
    await source.waitFor();
    expect(await source.locator('[data-testid="source-format"]').innerText()).toContain('verl-console');
    expect(await source.innerText()).toContain('verl_grpo_qwen.log');
    expect(await source.innerText()).toMatch(/sha256 [0-9a-f]{12}…/);
    // The log names no seed and no backend: the header says so instead of the 0 and "unknown" the record stores.
    expect(await page.locator('[data-testid="run-seed"]').innerText()).toBe('seed unknown');
    const head = await page.locator('.head').first().innerText();
    expect(head).toMatch(/imported by app \d+\.\d+\.\d+/);
    expect(head).not.toContain('backend');
    // Source keys: the verl key that fed a catalog key, and a key the catalog does not know, still chartable.
    const keys = page.locator('[data-testid="source-keys"]');
    const mapped = keys.locator('tr[data-mapped="true"]', { hasText: 'actor/pg_loss' });
    expect(await mapped.count()).toBe(1);
    const unmapped = keys.locator('tr[data-mapped="false"]', { hasText: 'critic/vf_explained_var' });
    expect(await unmapped.count()).toBe(1);
    await unmapped.locator('input[type="checkbox"]').check();
    const own = page.locator('.chart-card[data-metric="critic/vf_explained_var"]');
    await own.waitFor();
    await waitUntil(
      "the unmapped key's chart to have its points",
      async () => (await own.getAttribute('data-points')) === String(STEPS),
      15_000,
    );
    // It opens on the charts the log has, with their points.
    expect(Number(await page.locator('.chart-card[data-metric="actor/entropy"]').getAttribute('data-points'))).toBe(STEPS);
    expect(await page.locator('.chart-card[data-metric="episode/valid_format_ratio"]').count()).toBe(0);
    const alert = page.locator('[data-testid="run-alerts"] li', { hasText: 'actor/pg_loss' });
    await alert.first().waitFor();
    expect(await alert.first().innerText()).toContain(`step ${NAN_FROM}`);
    // Which rules ran on a log without validity or zero-variance metrics.
    const rules = page.locator('[data-testid="rules-ran"]');
    await rules.waitFor({ timeout: 15_000 });
    expect(await rules.locator('li[data-rule="non_finite"]').getAttribute('data-applicable')).toBe('true');
    expect(await rules.locator('li[data-rule="validity_drop"]').getAttribute('data-applicable')).toBe('false');
    expect(await rules.locator('li[data-rule="validity_drop"]').innerText()).toContain('not applicable');
    await waitForCharts();
    await shots('ui-imported-run');
  });

  it('says a dropped copy of the same file is already imported, and imports it again on request', async () => {
    await gotoView(page, 'runs');
    await dropFile('copy-of-verl_grpo_qwen.log', logText);
    const { state, text } = await lastItemSettled();
    expect(state, text).toBe('duplicate');
    expect(text).toContain('already imported as');
    expect(await items().last().locator(`[data-run-link="${runId}"]`).count()).toBe(1);
    const before = await page.locator('tbody tr[data-run-id]').count();
    await items().last().locator('[data-testid="import-again"]').click();
    const again = await lastItemSettled();
    expect(again.state, again.text).toBe('imported');
    await waitUntil(
      'the second copy in the table',
      async () => (await page.locator('tbody tr[data-run-id]').count()) === before + 1,
      15_000,
    );
  });

  it('still imports a reproducibility bundle through the same button', async () => {
    const exp = await lab.call('bundles.export', { runId: synthId });
    expect(exp.ok).toBe(true);
    if (!exp.ok) return;
    await page.setInputFiles('[data-testid="import-input"]', {
      name: exp.value.fileName,
      mimeType: 'application/zip',
      buffer: readFileSync(exp.value.path),
    });
    // The run it holds is still in this lab: said, nothing made; "import a copy" makes one on request.
    const own = await lastItemSettled();
    expect(own.state, own.text).toBe('duplicate');
    expect(own.text).toContain('already in the lab as');
    expect(await items().last().locator(`[data-run-link="${synthId}"]`).count()).toBe(1);
    await items().last().locator('[data-testid="import-again"]').click();
    await waitUntil('the copy to be imported', async () => (await items().last().getAttribute('data-state')) === 'imported', 60_000, 200);
    const { state, text } = await lastItemSettled();
    expect(state, text).toBe('imported');
    expect(text).toContain('imported 120 steps (bundle)');
    const copy = (await items().last().locator('[data-run-link]').first().getAttribute('data-run-link'))!;
    expect(copy).not.toBe(synthId);
    // The same bundle file again: already in the lab as the copy and the run, with a copy on request.
    await page.setInputFiles('[data-testid="import-input"]', {
      name: exp.value.fileName,
      mimeType: 'application/zip',
      buffer: readFileSync(exp.value.path),
    });
    const again = await lastItemSettled();
    expect(again.state, again.text).toBe('duplicate');
    expect(again.text).toContain('already in the lab as');
    expect(await items().last().locator(`[data-run-link="${copy}"]`).count()).toBe(1);
    expect(await items().last().locator('[data-testid="import-again"]').count()).toBe(1);
  });

  it("refuses a file in no known format with the importer's message", async () => {
    const prose = 'Meeting notes\nWe talked about the learning rate.\nNo numbers here, just words.\n';
    await page.setInputFiles('[data-testid="import-input"]', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(prose) });
    const { state, text } = await lastItemSettled();
    expect(state, text).toBe('refused');
    // The message names the file as uploaded (not the server's temp copy) and the formats it tried.
    expect(text).toContain('notes.txt is in no known format');
    expect(text).not.toContain('.uploads');
    expect(text).toContain('verl-console');
    await screenshot(page, 'ui-import-refused');
  });

  it('imports a refused log as the format the user names', async () => {
    // A verl log whose first 64 KB (what detection reads) are start-up output before the first step line.
    const noise = Array.from(
      { length: 1000 },
      (_, i) => `Loading checkpoint shard ${i} of the reference model weights from disk, please wait`,
    ).join('\n');
    await page.setInputFiles('[data-testid="import-input"]', {
      name: 'late_start.log',
      mimeType: 'text/plain',
      buffer: Buffer.from(`${noise}\n${verlLog(1, 20)}`),
    });
    const refused = await lastItemSettled();
    expect(refused.state, refused.text).toBe('refused');
    const item = items().last();
    await item.locator('[data-testid="import-format"]').selectOption('verl-console');
    await item.locator('[data-testid="import-as"]').click();
    const { state, text } = await lastItemSettled();
    expect(state, text).toBe('imported');
    expect(text).toContain('imported 20 steps (verl-console');
  });

  const real = realRun('verl-console/gemma-2-2b-it-ppo-bsz512_4-prompt1024-resp-512-0.640.log');
  it.skipIf(real === null)(
    `imports a real verl log from ../shared/data/real-runs${real === null ? ' — NOT RUN: the folder is absent' : ''}`,
    async () => {
      await page.setInputFiles('[data-testid="import-input"]', {
        name: basename(real!),
        mimeType: 'text/plain',
        buffer: readFileSync(real!),
      });
      const { state, text } = await lastItemSettled();
      expect(state, text).toBe('imported');
      expect(text).toContain('(verl-console');
      const id = (await items().last().locator('[data-run-link]').first().getAttribute('data-run-link'))!;
      const rec = await lab.call('runs.get', { runId: id });
      // Its README: training steps 0–105 (step 0 also carries the pre-training validation line).
      expect(rec.ok && rec.value.step).toBe(105);
    },
  );

  it("imports a TensorBoard folder with Import folder: one run per folder (a restarted writer's two files are one run), other files left out", async () => {
    // Two runs written by TensorBoard's own EventFileWriter (tests/peers/tensorboard_peer.py), beside files
    // a training folder also holds, which TensorBoard would not read either. seed1's writer was restarted: its
    // folder holds a second event file with steps 70–120.
    const tb = join(work, 'tb_runs');
    const events = (base: number, from = 0) =>
      Array.from({ length: 6 }, (_, i) => [
        (from + i + 1) * 10,
        1_700_000_000 + from + i,
        [
          ['train/loss', 'simple', base - i * 0.01],
          ['train/grad_norm', 'simple', 0.3 + i * 0.01],
        ],
      ]);
    const spec = join(work, 'tb-spec.json');
    writeFileSync(
      spec,
      JSON.stringify({
        files: [
          { dir: join(tb, 'runs', 'seed1'), events: events(0.5) },
          { dir: join(tb, 'runs', 'seed1'), events: events(0.4, 6) },
          { dir: join(tb, 'runs', 'seed2'), events: events(0.6) },
        ],
      }),
    );
    const py = spawnSync(peerPython(), [join(ROOT, 'tests', 'peers', 'tensorboard_peer.py'), 'write', spec], { encoding: 'utf8' });
    expect(py.status, py.stderr).toBe(0);
    writeFileSync(join(tb, 'runs', 'seed1', 'trainer_state.json'), '{"log_history": []}');
    writeFileSync(join(tb, 'README.md'), '# my runs\n');
    await gotoView(page, 'runs');
    await page.setInputFiles('[data-testid="import-folder-input"]', tb);
    await waitUntil(
      'both run folders to be imported',
      async () => (await items().count()) === 2 && (await page.locator('[data-testid="import-item"][data-state="sending"]').count()) === 0,
      60_000,
      200,
    );
    const texts: string[] = [];
    for (const it of await items().all()) {
      expect(await it.getAttribute('data-state'), await it.innerText()).toBe('imported');
      expect(await it.locator('[data-run-link]').count()).toBe(1);
      texts.push(await it.innerText());
    }
    expect(texts.find((t) => t.includes('seed1'))).toContain('imported 12 steps (tensorboard');
    expect(texts.find((t) => t.includes('seed2'))).toContain('imported 6 steps (tensorboard');
    expect(await page.locator('[data-testid="import-note"]').innerText()).toContain(
      '2 file(s) of the folder are not TensorBoard event files',
    );
    const uploaded = await Promise.all(
      (await items().all()).map(async (it) => (await it.locator('[data-run-link]').first().getAttribute('data-run-link'))!),
    );

    // The same folder by its path on the lab's machine: TensorBoard's grouping (one run per folder) finds both
    // runs already imported, by the SHA-256 of their event files.
    await page.click('[data-testid="import-path-button"]');
    const dialog = page.locator('dialog[open]');
    await dialog.locator('input[name="value"]').fill(tb);
    await dialog.locator('button[type="submit"]').click();
    const { state, text } = await lastItemSettled();
    expect(state, text).toBe('duplicate');
    const holders = await items()
      .last()
      .locator('[data-run-link]')
      .evaluateAll((els: { getAttribute(n: string): string | null }[]) => els.map((e) => e.getAttribute('data-run-link')));
    expect([...holders].sort()).toEqual([...uploaded].sort());
  });

  it('follows a log that is still being written, live, until stopped', async () => {
    const path = join(work, 'growing.log');
    writeFileSync(path, verlLog(1, 5));
    await gotoView(page, 'runs');
    await page.click('[data-testid="follow-button"]');
    const dialog = page.locator('dialog[open]');
    await dialog.locator('input[name="value"]').fill(path);
    await dialog.locator('button[type="submit"]').click();
    await page.waitForSelector('[data-testid="run-detail"]');
    const followed = (await page.locator('[data-testid="run-detail"]').getAttribute('data-run-id'))!;
    await page.locator('[data-testid="stop-following"]').waitFor();
    const entropy = page.locator('.chart-card[data-metric="actor/entropy"]');
    // A step is stored once the next one begins (its line may still be growing): 4 of the 5 so far.
    await waitUntil(
      'the first steps in the chart',
      async () => (await entropy.count()) === 1 && Number(await entropy.getAttribute('data-points')) >= 4,
      30_000,
    );
    expect(await page.locator('[data-testid="source-keys"] tr[data-key="actor/entropy"]').getAttribute('data-mapped')).toBe('true');
    appendFileSync(
      path,
      verlLog(6, 12)
        .split('\n')
        .filter((l) => l.includes('step:'))
        .join('\n') + '\n',
    );
    await waitUntil('the appended steps to arrive live', async () => Number(await entropy.getAttribute('data-points')) >= 11, 30_000);
    await waitUntil(
      'the step shown to follow',
      async () => (await page.locator('[data-testid="run-step"]').innerText()) === 'step 11',
      10_000,
    );
    await screenshot(page, 'ui-follow-live');
    await page.click('[data-testid="stop-following"]');
    await waitUntil('following to stop', async () => (await page.locator('[data-testid="stop-following"]').count()) === 0, 15_000);
    const rec = await lab.call('runs.get', { runId: followed });
    expect(rec.ok && rec.value.source?.following).toBe(false);
    expect(rec.ok && rec.value.step).toBe(12);
  });

  it('a followed log opened before its first step: "Rules that ran" grows as its metrics arrive', async () => {
    const path = join(work, 'not-yet.log');
    writeFileSync(path, '');
    await gotoView(page, 'runs');
    await page.click('[data-testid="follow-button"]');
    const dialog = page.locator('dialog[open]');
    await dialog.locator('input[name="value"]').fill(path);
    await dialog.locator('button[type="submit"]').click();
    await page.locator('[data-testid="stop-following"]').waitFor();
    const rules = page.locator('[data-testid="rules-ran"]');
    await rules.waitFor({ timeout: 15_000 });
    // Nothing logged yet: no rule can run.
    expect(await rules.locator('li[data-applicable="true"]').count()).toBe(0);
    appendFileSync(path, verlLog(1, 8) + '\n');
    await waitUntil(
      'the rules list to follow the new keys',
      async () => (await rules.locator('li[data-rule="entropy_shift"]').getAttribute('data-applicable')) === 'true',
      30_000,
    );
    expect(await rules.locator('li[data-rule="non_finite"]').getAttribute('data-applicable')).toBe('true');
    expect(await rules.locator('li[data-rule="kl_drift"]').getAttribute('data-applicable')).toBe('true');
    expect(await rules.locator('li[data-rule="validity_drop"]').getAttribute('data-applicable')).toBe('false');
    expect(await rules.locator('summary').innerText()).not.toMatch(/Rules that ran: 0 of/);
    await page.click('[data-testid="stop-following"]');
    await waitUntil('following to stop', async () => (await page.locator('[data-testid="stop-following"]').count()) === 0, 15_000);
  });
});

describe('the detector on a stored run', () => {
  it('shows no alert on a synthetic collapse run until Run detector raises them', async () => {
    await page.goto(`${lab.origin}/?view=run&id=${synthId}#token=${lab.token}`);
    await page.waitForSelector(`[data-testid="run-detail"][data-run-id="${synthId}"]`);
    const panel = page.locator('[data-testid="detector-panel"]');
    await panel.waitFor();
    expect(await page.locator('[data-testid="run-alerts"]').count()).toBe(0);
    // The dry check on opening says alerts are waiting, without storing any.
    await page.locator('[data-testid="detector-unsaved"]').waitFor({ timeout: 15_000 });
    const stored = await lab.call('runs.get', { runId: synthId });
    expect(stored.ok && stored.value.alerts.length).toBe(0);
    await page.click('[data-testid="run-detector"]');
    await page.locator('[data-testid="run-alerts"] li').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-testid="detector-result"]').innerText()).toMatch(/\d+ alerts? on this run \(\d+ new\)/);
    const after = await lab.call('runs.get', { runId: synthId });
    expect(after.ok && after.value.alerts.length).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="run-alerts"] li').count()).toBe(after.ok ? after.value.alerts.length : -1);
    await page.locator('[data-testid="alert-badge"]').waitFor({ timeout: 15_000 });
    await waitForCharts();
    await shots('ui-run-detector');
  });

  it('ran without CSP violations or uncaught page errors', () => {
    expect(app.problems).toEqual([]);
  });
});
