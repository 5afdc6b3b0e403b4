/**
 * UI benchmark for imported runs ("the first chart of an imported 100k-step run drawn in the
 * run view in < 500 ms"), in Debian's Chromium against the real backend (`arlarena serve`).
 *
 *   npm run bench:ui-imported                   table
 *   npm run bench:ui-imported -- --json         one JSON object per line
 *   npm run bench:ui-imported -- --steps 100000 --repeat 5
 *
 * A flat JSONL metric stream of --steps steps (step + 9 verl-named metrics a line, as a script or Tinker writes
 * it) is generated in a temporary folder and imported through the real import path (importLogs: detect, parse,
 * map, store, detector) into a fresh data directory. Then the run view of that run is opened --repeat times:
 *   cold    a fresh page opened straight on the run's URL: navigation start → the first chart card's chart
 *           drawn and painted (the renderer's start, the API calls — runs.get, runs.metricKeys, runs.metrics
 *           with 2,000 points per series — and the chart worker's first draw all on the clock). The server's
 *           metric cache is cold on load 1 only (it reads and parses the run's metrics file then); later loads
 *           measure the app with the server warm.
 *   in-app  the runs table opened, 3 s idle (the app loads the chart worker then), a click on the run's name:
 *           click → first chart drawn.
 * Times are read on the page's own clock (performance.now at the chart's first draw), waited for over plain
 * CDP so no Playwright script runs in the page while it loads. The load average is printed: wall times on a
 * shared 2-core machine grow with it.
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { benchArgs, usageError } from './args';
import { RunStore } from '../src/main/store/index';
import { importLogs } from '../src/main/imports/importLogs';
import { launchBrowser } from '../e2e/support/browser';
import { startLab } from '../e2e/support/lab';

const USAGE = `Usage: npm run bench:ui-imported -- [options]
Time to the first chart of an imported run's view (cold deep link and in-app click) in Debian's Chromium.

Options:
  --steps N     steps of the imported run (default 100000)
  --repeat N    page loads per way of reaching the view (default 5)
  --json        one JSON object per line
  --help, -h    this help`;

const args = benchArgs('ui-imported', USAGE, {
  steps: { type: 'string', default: '100000' },
  repeat: { type: 'string', default: '5' },
  json: { type: 'boolean', default: false },
});
const steps = Number(args.steps);
const repeat = Number(args.repeat);
for (const [name, v] of [
  ['--steps', steps],
  ['--repeat', repeat],
] as const) {
  if (!Number.isInteger(v) || v < 1) usageError('ui-imported', USAGE, `${name} must be a whole number ≥ 1, got ${String(v)}`);
}

/** How long the in-app loads leave the runs table idle before the click (as bench:ui's Compare loads). */
const IDLE_MS = 3000;
const GOAL_MS = 500;

/** Deterministic, smooth-with-noise metric values (a sine per key plus a hashed jitter; no Math.random). */
function line(step: number): string {
  const j = (k: number) => (Math.sin(step * 12.9898 + k * 78.233) * 43758.5453) % 1;
  const t = step / steps;
  return JSON.stringify({
    step,
    'actor/entropy': 0.6 - 0.5 * t + 0.01 * j(1),
    'actor/pg_loss': 0.02 * Math.sin(step / 50) + 0.005 * j(2),
    'actor/grad_norm': 1 + 0.2 * Math.abs(j(3)),
    'actor/ppo_kl': 0.001 + 0.0002 * j(4),
    'actor/pg_clipfrac': 0.003 + 0.001 * Math.abs(j(5)),
    'critic/score/mean': Math.min(0.95, 0.05 + 0.9 * t) + 0.02 * j(6),
    'response_length/mean': 200 + 20 * Math.sin(step / 300) + 3 * j(7),
    'response_length/clip_ratio': 0.05 + 0.01 * Math.abs(j(8)),
    'timing_s/gen': 12 + j(9),
  });
}

async function writeLog(path: string): Promise<void> {
  const out = createWriteStream(path);
  for (let s = 1; s <= steps; s++) if (!out.write(`${line(s)}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

interface Times {
  /** performance.now() at the first chart's first draw (navigation start = 0). */
  drawnAt: number;
  /** The click on the run's link (in-app loads), on the page's clock. */
  clickAt: number | null;
  charts: number;
  /** The slowest /api/call since navigation (cold) or the click (in-app). */
  apiMs: number | null;
}

/** Resolves when the run view's first chart has drawn (its data-rendered turns true). */
async function waitForFirstChart(cdp: CDPSession, errors: string[]): Promise<Times> {
  const evaluated = cdp.send('Runtime.evaluate', {
    expression: `new Promise((resolve) => {
      const sel = '[data-testid="run-detail"] .chart-card .chart[data-rendered="true"]';
      const done = () => {
        const clickAt = window.__arlClickAt ?? null;
        const api = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/call') && e.startTime >= (clickAt ?? 0));
        resolve({ drawnAt: performance.now(), clickAt, charts: document.querySelectorAll('[data-testid="run-detail"] .chart-card').length, apiMs: api.length ? Math.max(...api.map((e) => e.responseEnd - e.startTime)) : null });
      };
      if (document.querySelector(sel)) return done();
      const mo = new MutationObserver(() => { if (document.querySelector(sel)) { mo.disconnect(); done(); } });
      mo.observe(document.documentElement, { subtree: true, attributes: true, childList: true, attributeFilter: ['data-rendered'] });
    })`,
    awaitPromise: true,
    returnByValue: true,
  });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`no chart was drawn within 120 s${errors.length ? `; page errors: ${errors.join('; ')}` : ''}`)),
      120_000,
    ).unref(),
  );
  const reply = await Promise.race([evaluated, timeout]);
  if (reply.exceptionDetails) throw new Error(`reading the render time failed: ${reply.exceptionDetails.text}`);
  return reply.result.value as Times;
}

async function openPage(browser: Browser): Promise<{ page: Page; cdp: CDPSession; errors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, cdp, errors, close: () => context.close() };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'arlarena-bench-ui-imported-'));
  const dataDir = join(work, 'data');
  const logPath = join(work, 'metrics.jsonl');
  try {
    const t0 = performance.now();
    await writeLog(logPath);
    const t1 = performance.now();
    const store = await RunStore.open(dataDir);
    const imported = await importLogs(store, [logPath], { name: `bench ${steps}-step import` });
    await store.close();
    const t2 = performance.now();
    const runId = imported.runIds[0];
    if (!runId || imported.steps !== steps)
      throw new Error(`the import made ${imported.runIds.length} run(s) with ${imported.steps} steps, expected 1 with ${steps}`);
    if (!args.json)
      console.log(
        `wrote a ${steps}-step ${imported.format} log in ${((t1 - t0) / 1000).toFixed(1)} s, imported it in ${((t2 - t1) / 1000).toFixed(1)} s (${work})`,
      );

    const lab = await startLab({ dataDir });
    const browser = await launchBrowser();
    const cold: { load: number; nav_to_chart_ms: number; api_ms: number | null; charts: number }[] = [];
    const inApp: { load: number; click_to_chart_ms: number; api_ms: number | null; charts: number }[] = [];
    try {
      for (let load = 1; load <= repeat; load++) {
        const p = await openPage(browser);
        await p.page.goto(`${lab.origin}/?view=run&id=${runId}#token=${lab.token}`);
        const m = await waitForFirstChart(p.cdp, p.errors);
        cold.push({ load, nav_to_chart_ms: m.drawnAt, api_ms: m.apiMs, charts: m.charts });
        await p.close();
      }
      for (let load = 1; load <= repeat; load++) {
        const p = await openPage(browser);
        await p.page.goto(`${lab.origin}/?view=runs#token=${lab.token}`);
        await p.page.locator(`tr[data-run-id="${runId}"] a`).waitFor();
        await p.page.waitForTimeout(IDLE_MS);
        await p.page.evaluate(() => {
          const w = globalThis as unknown as {
            __arlClickAt?: number;
            addEventListener: (t: string, f: (e: { timeStamp: number }) => void, o: object) => void;
          };
          w.addEventListener('click', (e) => (w.__arlClickAt = e.timeStamp), { capture: true, once: true });
        });
        await p.page.click(`tr[data-run-id="${runId}"] a`);
        const m = await waitForFirstChart(p.cdp, p.errors);
        if (m.clickAt === null) throw new Error('the click on the run was not recorded');
        inApp.push({ load, click_to_chart_ms: m.drawnAt - m.clickAt, api_ms: m.apiMs, charts: m.charts });
        await p.close();
      }
    } finally {
      await browser.close();
      await lab.stop();
    }

    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const medCold = median(cold.map((s) => s.nav_to_chart_ms));
    const medWarm = cold.length > 1 ? median(cold.slice(1).map((s) => s.nav_to_chart_ms)) : medCold;
    const medClick = median(inApp.map((s) => s.click_to_chart_ms));
    const load = loadavg()[0];
    if (args.json) {
      for (const s of cold)
        console.log(
          JSON.stringify({ bench: 'ui.imported_first_chart', way: 'cold', steps, server_cache: s.load === 1 ? 'cold' : 'warm', ...s }),
        );
      for (const s of inApp) console.log(JSON.stringify({ bench: 'ui.imported_first_chart', way: 'in-app', steps, ...s }));
      console.log(
        JSON.stringify({
          bench: 'ui.imported_first_chart',
          summary: 'median',
          steps,
          import_s: (t2 - t1) / 1000,
          nav_to_chart_ms: medCold,
          nav_to_chart_warm_server_ms: medWarm,
          click_to_chart_ms: medClick,
          load_average: load,
          goal_ms: GOAL_MS,
          met: medCold < GOAL_MS && medClick < GOAL_MS,
        }),
      );
      return;
    }
    const f = (v: number | null) => (v === null ? '—' : v.toFixed(0));
    console.log(
      `\nRun view of an imported ${steps}-step run (${cold[0]?.charts ?? 0} charts, 2,000 points each), Chromium, load average ${load.toFixed(1)} on ${cpus().length} cores`,
    );
    console.log('| load | cold: nav→first chart ms | slowest api ms | in-app: click→first chart ms | slowest api ms |');
    console.log('|---|---|---|---|---|');
    for (let i = 0; i < repeat; i++)
      console.log(
        `| ${i + 1}${i === 0 ? ' (server cache cold)' : ''} | ${f(cold[i].nav_to_chart_ms)} | ${f(cold[i].api_ms)} | ${f(inApp[i].click_to_chart_ms)} | ${f(inApp[i].api_ms)} |`,
      );
    console.log(`| median | ${f(medCold)} (server warm: ${f(medWarm)}) | | ${f(medClick)} | |`);
    console.log(
      `goal: first chart < ${GOAL_MS} ms → cold ${medCold < GOAL_MS ? 'met' : 'NOT met'}, in-app ${medClick < GOAL_MS ? 'met' : 'NOT met'} (medians)`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`bench:ui-imported failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
