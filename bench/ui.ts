/**
 * UI benchmark: time to first render of the Compare view with 8 runs × 2,000 steps × 10 metrics,
 * measured in Debian's Chromium against the real backend (`arlarena serve`) on a temporary data directory
 * filled through the run store's API with synthetic runs. Goal: under 500 ms.
 *
 *   npm run bench:ui                    table
 *   npm run bench:ui -- --json          one JSON object per line
 *   npm run bench:ui -- --runs 8 --steps 2000 --repeat 5
 *   npm run bench:ui -- --profile       also trace each load (Chromium tracing + V8 sampler) and print where the
 *                                       main thread's time went up to first render: the top trace events and
 *                                       JS functions by self time; writes test-results/bench-ui-<load>.cpuprofile
 *                                       (open in DevTools → Performance) and the raw trace next to it
 *
 "First render" = the summary table and every chart on the first screen drawn and painted (charts further
 * down draw as they scroll into view). Columns, per page load (a fresh browser page each time; each load starts
 * once the previous page's requests have all been answered, so that its deferred work — the baselines, the other
 * charts' metrics — is not served during the next load, which no single user's open of a link would meet):
 *   nav_to_render_ms   navigation start → first render (HTML, JS, API calls, model, ECharts, paint)
 *   mount_to_render_ms Compare view mounted → first render
 *   data_ms            mount → runs.getMany and runs.metrics answered (server read + downsampling + transfer;
 *                      opened on Compare, the page's entry sends them before the view mounts, so this is short)
 *   draw_ms            data in → first render (compare model, Svelte, ECharts — in the chart worker where the
 *                      browser has one — and paint)
 *   main_thread_ms     the page's main-thread busy time (CDP Performance TaskDuration, read just after first
 *                      render): the wall time of its tasks, so it still grows with load when the thread waits
 *                      for a core mid-task
 *   cpu_ms             the page's main-thread CPU time (thread time) from navigation to first render, from a
 *                      Chromium trace of the load: the page's own work, nearly independent of other load
 *   worker_cpu_ms      the page's dedicated workers' CPU time over the same span (the chart worker's ECharts)
 *   api_ms             the slowest /api/call as the page saw it (Resource Timing)
 * The median is over all loads. The machine's load average is printed: wall times on a shared 2-core box
 * grow with it.
 *
 * Two ways to reach the view, each timed `--repeat` times:
 *   cold    a fresh page opened straight on the Compare URL: renderer start, the app's and ECharts' scripts
 *           and the data all on the clock (the columns above)
 *   in-app  the runs table opened, the runs ticked, 3 s idle (a user choosing runs; the app loads the chart
 *           worker then), then a click on "Compare selected": click_to_render_ms is that click → first render
 * and, a browser that has had the app open before, a new tab straight on the Compare URL (the cold columns):
 *   tab, cached    the browser's cache kept: the server marks content-hashed assets immutable, so the scripts
 *                  come from the cache and Chromium reuses its compiled code for them (two untimed opens first:
 *                  Chromium keeps compiled code from a script's second run on)
 *   tab, no cache  the same with the browser's cache disabled (CDP Network.setCacheDisabled): every asset is
 *                  fetched and compiled afresh, which is what every open did while the server sent no-cache
 *                  without validators (before e409d50)
 *           The two alternate load by load, so the machine's load weighs on both alike.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchArgs, usageError } from './args';
import { RunStore, writeSyntheticRun } from '../src/main/store/index';
import type { SyntheticShape } from '../src/core/stability/synthetic';
import { RESULTS_DIR, launchBrowser } from '../e2e/support/browser';
import { LIGHT_CATEGORIES, TRACE_CATEGORIES, analyzeTrace, mainThreadToMark, type ProfileReport } from './uiProfile';
import { startLab } from '../e2e/support/lab';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';

const USAGE = `Usage: npm run bench:ui -- [options]
Time to first render of the Compare view (cold deep link and in-app click) in Debian's Chromium, on synthetic runs.

Options:
  --runs N      runs to compare (default 8)
  --steps N     steps per run (default 2000)
  --repeat N    page loads per way of reaching the view (default 5)
  --profile     also trace each load and print where the main thread's time went
  --top N       rows of the --profile tables (default 25)
  --json        one JSON object per line
  --help, -h    this help`;

const args = benchArgs('ui', USAGE, {
  runs: { type: 'string', default: '8' },
  steps: { type: 'string', default: '2000' },
  repeat: { type: 'string', default: '5' },
  json: { type: 'boolean', default: false },
  profile: { type: 'boolean', default: false },
  top: { type: 'string', default: '25' },
});
const nRuns = Number(args.runs);
const steps = Number(args.steps);
const repeat = Number(args.repeat);
for (const [name, v] of [
  ['--runs', nRuns],
  ['--steps', steps],
  ['--repeat', repeat],
] as const) {
  if (!Number.isInteger(v) || v < 1) usageError('ui', USAGE, `${name} must be a whole number ≥ 1, got ${String(v)}`);
}

const SHAPES: SyntheticShape[] = ['calm', 'cispo_collapse', 'calm', 'entropy_collapse', 'calm', 'kl_drift', 'calm', 'mismatch'];

interface Sample {
  load: number;
  nav_to_render_ms: number;
  mount_to_render_ms: number;
  data_ms: number;
  draw_ms: number;
  main_thread_ms: number;
  cpu_ms: number;
  worker_cpu_ms: number;
  api_ms: number | null;
  charts: number;
  charts_drawn: number;
}

interface InAppSample {
  load: number;
  click_to_render_ms: number;
  mount_to_render_ms: number;
  data_ms: number;
  draw_ms: number;
  api_ms: number | null;
  charts_drawn: number;
}

/** How long the in-app loads leave the runs table idle before clicking Compare (a user selecting runs). */
const IDLE_MS = 3000;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arlarena-bench-ui-'));
  const t0 = performance.now();
  const store = await RunStore.open(dataDir);
  const ids: string[] = [];
  for (let i = 0; i < nRuns; i++) {
    const shape = SHAPES[i % SHAPES.length];
    const r = await writeSyntheticRun(store, {
      steps,
      seed: i + 1,
      shape,
      preset: i % 2 ? 'grpo' : 'sampo',
      name: `bench ${i + 1} ${shape}`,
      nanAt: shape === 'cispo_collapse' ? Math.floor(steps * 0.8) : undefined,
    });
    ids.push(r.id);
  }
  const seedMs = performance.now() - t0;
  if (!args.json) console.log(`seeded ${nRuns} runs × ${steps} steps in ${(seedMs / 1000).toFixed(1)} s (${dataDir})`);

  const lab = await startLab({ dataDir });
  const browser = await launchBrowser();
  const samples: Sample[] = [];
  const profiles: ProfileReport[] = [];
  const inApp: InAppSample[] = [];
  const tabs: Record<TabMode, Sample[]> = { cached: [], 'no cache': [] };
  const compareUrl = `${lab.origin}/?view=compare&runs=${ids.join(',')}#token=${lab.token}`;
  try {
    for (let load = 1; load <= repeat; load++) {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const { sample, trace } = await coldLoad(browser, context, compareUrl, load, false);
      if (args.profile) profiles.push(saveProfile(load, trace));
      samples.push(sample);
      await context.close();
    }
    for (let load = 1; load <= repeat; load++) inApp.push(await inAppLoad(browser, lab.origin, lab.token, ids, load));
    const contexts = {
      cached: await browser.newContext({ viewport: { width: 1400, height: 900 } }),
      'no cache': await browser.newContext({ viewport: { width: 1400, height: 900 } }),
    };
    for (const [mode, context] of Object.entries(contexts) as [TabMode, BrowserContext][]) {
      for (let warm = 0; warm < 2; warm++) await coldLoad(browser, context, compareUrl, 0, mode === 'no cache');
    }
    for (let load = 1; load <= repeat; load++) {
      for (const mode of (load % 2 ? ['cached', 'no cache'] : ['no cache', 'cached']) as TabMode[])
        tabs[mode].push((await coldLoad(browser, contexts[mode], compareUrl, load, mode === 'no cache')).sample);
    }
    for (const context of Object.values(contexts)) await context.close();
  } finally {
    await browser.close();
    await lab.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const med = {
    nav: median(samples.map((s) => s.nav_to_render_ms)),
    mount: median(samples.map((s) => s.mount_to_render_ms)),
    data: median(samples.map((s) => s.data_ms)),
    draw: median(samples.map((s) => s.draw_ms)),
    main: median(samples.map((s) => s.main_thread_ms)),
    cpu: median(samples.map((s) => s.cpu_ms)),
    worker: median(samples.map((s) => s.worker_cpu_ms)),
    click: median(inApp.map((s) => s.click_to_render_ms)),
  };
  const load = loadavg()[0];
  if (args.json) {
    for (const s of samples)
      console.log(JSON.stringify({ bench: 'ui.compare_first_render', runs: nRuns, steps, metrics: samples[0]?.charts ?? 0, ...s }));
    console.log(
      JSON.stringify({
        bench: 'ui.compare_first_render',
        summary: 'median',
        runs: nRuns,
        steps,
        nav_to_render_ms: med.nav,
        mount_to_render_ms: med.mount,
        data_ms: med.data,
        draw_ms: med.draw,
        main_thread_ms: med.main,
        cpu_ms: med.cpu,
        worker_cpu_ms: med.worker,
        load_average: load,
        goal_ms: 500,
        met: med.nav < 500,
      }),
    );
    for (const s of inApp) console.log(JSON.stringify({ bench: 'ui.compare_in_app_render', runs: nRuns, steps, ...s }));
    console.log(
      JSON.stringify({
        bench: 'ui.compare_in_app_render',
        summary: 'median',
        runs: nRuns,
        steps,
        click_to_render_ms: med.click,
        mount_to_render_ms: median(inApp.map((s) => s.mount_to_render_ms)),
        data_ms: median(inApp.map((s) => s.data_ms)),
        draw_ms: median(inApp.map((s) => s.draw_ms)),
        idle_ms: IDLE_MS,
        load_average: load,
        goal_ms: 500,
        met: med.click < 500,
      }),
    );
    for (const [mode, xs] of Object.entries(tabs)) {
      for (const s of xs) console.log(JSON.stringify({ bench: 'ui.compare_new_tab_render', cache: mode, runs: nRuns, steps, ...s }));
      console.log(
        JSON.stringify({
          bench: 'ui.compare_new_tab_render',
          cache: mode,
          summary: 'median',
          runs: nRuns,
          steps,
          nav_to_render_ms: median(xs.map((s) => s.nav_to_render_ms)),
          cpu_ms: median(xs.map((s) => s.cpu_ms)),
          worker_cpu_ms: median(xs.map((s) => s.worker_cpu_ms)),
          load_average: load,
          goal_ms: 500,
          met: median(xs.map((s) => s.nav_to_render_ms)) < 500,
        }),
      );
    }
    return;
  }
  const f = (v: number | null) => (v === null ? '—' : v.toFixed(0));
  if (profiles.length) printProfiles(profiles);
  console.log(
    `\nCompare view, ${nRuns} runs × ${steps} steps × ${samples[0]?.charts ?? 0} metric charts (${samples[0]?.charts_drawn ?? 0} on the first screen), Chromium (${process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'}), load average ${load.toFixed(1)} on ${cpus().length} cores`,
  );
  console.log(
    '| load | nav→render ms | mount→render ms | data ms | draw ms | main-thread ms | main-thread CPU ms | worker CPU ms | slowest api ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const s of samples)
    console.log(
      `| ${s.load} | ${f(s.nav_to_render_ms)} | ${f(s.mount_to_render_ms)} | ${f(s.data_ms)} | ${f(s.draw_ms)} | ${f(s.main_thread_ms)} | ${f(s.cpu_ms)} | ${f(s.worker_cpu_ms)} | ${f(s.api_ms)} |`,
    );
  console.log(
    `| median | ${f(med.nav)} | ${f(med.mount)} | ${f(med.data)} | ${f(med.draw)} | ${f(med.main)} | ${f(med.cpu)} | ${f(med.worker)} | |`,
  );
  console.log(`goal: first render < 500 ms → ${med.nav < 500 ? 'met' : 'NOT met'} (median navigation → render)`);
  console.log(`\nIn-app: the runs table open, ${nRuns} runs selected, ${IDLE_MS / 1000} s idle, then a click on "Compare selected"`);
  console.log('| load | click→render ms | mount→render ms | data ms | draw ms | slowest api ms |');
  console.log('|---|---|---|---|---|---|');
  for (const s of inApp)
    console.log(
      `| ${s.load} | ${f(s.click_to_render_ms)} | ${f(s.mount_to_render_ms)} | ${f(s.data_ms)} | ${f(s.draw_ms)} | ${f(s.api_ms)} |`,
    );
  console.log(
    `| median | ${f(med.click)} | ${f(median(inApp.map((s) => s.mount_to_render_ms)))} | ${f(median(inApp.map((s) => s.data_ms)))} | ${f(median(inApp.map((s) => s.draw_ms)))} | |`,
  );
  console.log(`goal: first render < 500 ms → ${med.click < 500 ? 'met' : 'NOT met'} (median click → render)`);
  console.log(`\nNew tab on the Compare URL in a browser that has opened the app before (2 untimed opens), the two ways alternating`);
  console.log(
    '| load | cache | nav→render ms | mount→render ms | data ms | draw ms | main-thread CPU ms | worker CPU ms | slowest api ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (let i = 0; i < repeat; i++) {
    for (const mode of ['cached', 'no cache'] as TabMode[]) {
      const s = tabs[mode][i];
      console.log(
        `| ${s.load} | ${mode} | ${f(s.nav_to_render_ms)} | ${f(s.mount_to_render_ms)} | ${f(s.data_ms)} | ${f(s.draw_ms)} | ${f(s.cpu_ms)} | ${f(s.worker_cpu_ms)} | ${f(s.api_ms)} |`,
      );
    }
  }
  for (const mode of ['cached', 'no cache'] as TabMode[]) {
    const xs = tabs[mode];
    const m = (k: keyof Sample) => f(median(xs.map((s) => s[k] as number)));
    console.log(
      `| median | ${mode} | ${m('nav_to_render_ms')} | ${m('mount_to_render_ms')} | ${m('data_ms')} | ${m('draw_ms')} | ${m('cpu_ms')} | ${m('worker_cpu_ms')} | |`,
    );
  }
  const ratio = median(tabs.cached.map((s) => s.nav_to_render_ms)) / median(tabs['no cache'].map((s) => s.nav_to_render_ms));
  console.log(
    `cached / no cache (median nav→render): ${ratio.toFixed(2)}; goal: first render < 500 ms → ${median(tabs.cached.map((s) => s.nav_to_render_ms)) < 500 ? 'met' : 'NOT met'} (cached)`,
  );
}

type TabMode = 'cached' | 'no cache';

/**
 * One page opened straight on the Compare URL in `context`, traced, until its first render. A fresh context has
 * nothing cached; a context used before has its cache unless `noCache`.
 */
async function coldLoad(
  browser: Browser,
  context: BrowserContext,
  url: string,
  load: number,
  noCache: boolean,
): Promise<{ sample: Sample; trace: string }> {
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  if (noCache) {
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  }
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await browser.startTracing(page, { categories: args.profile ? TRACE_CATEGORIES : LIGHT_CATEGORIES });
  await page.goto(url);
  const m = await waitForRender(cdp, errors);
  const metrics = (await cdp.send('Performance.getMetrics')).metrics;
  const trace = (await browser.stopTracing()).toString('utf8');
  const cpu = mainThreadToMark(trace);
  const task = metrics.find((x) => x.name === 'TaskDuration')?.value ?? NaN;
  await settle(page);
  await page.close();
  return {
    trace,
    sample: {
      load,
      nav_to_render_ms: m.sinceNavMs,
      mount_to_render_ms: m.sinceMountMs,
      data_ms: m.dataMs,
      draw_ms: m.drawMs,
      main_thread_ms: task * 1000,
      cpu_ms: cpu.cpuMs,
      worker_cpu_ms: cpu.workerCpuMs,
      api_ms: m.apiMs,
      charts: m.charts,
      charts_drawn: m.chartsDrawn,
    },
  };
}

/**
 * Waits until the page's deferred requests (sent once the first screen is drawn and the page is idle: the
 * baselines, the other charts' metrics) have been answered, so the server is idle again for the next load.
 */
async function settle(page: Page): Promise<void> {
  await page.waitForTimeout(1500);
  await page.waitForLoadState('networkidle');
}

interface RenderTimes {
  sinceMountMs: number;
  sinceNavMs: number;
  dataMs: number;
  drawMs: number;
  chartsDrawn: number;
  /** The slowest /api/call the page made after the click (in-app) or since navigation (cold). */
  apiMs: number | null;
  charts: number;
  /** The click on "Compare selected" (in-app loads), on the page's clock. */
  clickAt: number | null;
}

/**
 * Waits for the page's 'compare-rendered' mark and reads the view's timings. Waited for over plain CDP
 * (Runtime.evaluate of a promise) rather than Playwright's waitForSelector, whose injected script (~330 kB,
 * ~40 ms of the page's main thread) would otherwise be compiled and run in the page while it is loading, and
 * counted as the page's work. The expression is a string, so this Node-side file needs no DOM types.
 */
async function waitForRender(cdp: CDPSession, errors: string[]): Promise<RenderTimes> {
  const evaluated = cdp.send('Runtime.evaluate', {
    expression: `new Promise((resolve) => {
      const done = () => {
        const clickAt = window.__arlClickAt ?? null;
        const api = performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/call') && e.startTime >= (clickAt ?? 0));
        resolve({ ...window.__arlCompareRender, clickAt, apiMs: api.length ? Math.max(...api.map((e) => e.responseEnd - e.startTime)) : null, charts: document.querySelectorAll('[data-testid="compare"] .chart-card').length });
      };
      new PerformanceObserver((list, obs) => {
        if (list.getEntriesByName('compare-rendered').length) { obs.disconnect(); done(); }
      }).observe({ type: 'mark', buffered: true });
    })`,
    awaitPromise: true,
    returnByValue: true,
  });
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(
      () =>
        reject(
          new Error(`the compare view did not finish rendering within 60 s${errors.length ? `; page errors: ${errors.join('; ')}` : ''}`),
        ),
      60_000,
    ).unref(),
  );
  const reply = await Promise.race([evaluated, timeout]);
  if (reply.exceptionDetails) throw new Error(`reading the render timings failed: ${reply.exceptionDetails.text}`);
  return reply.result.value as RenderTimes;
}

/**
 * In-app: the runs table is loaded, the user selects the runs and, after looking at the table for a while
 * (IDLE_MS: the app uses such time to load the chart worker), clicks "Compare selected". Timed from that click
 * to the same first render as the cold loads.
 */
async function inAppLoad(browser: Browser, origin: string, token: string, ids: string[], load: number): Promise<InAppSample> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${origin}/?view=runs#token=${token}`);
    for (const id of ids) await page.locator(`tr[data-run-id="${id}"] input[type="checkbox"]`).check();
    await page.waitForTimeout(IDLE_MS);
    await page.evaluate(() => {
      const w = globalThis as unknown as {
        __arlClickAt?: number;
        addEventListener: (t: string, f: (e: { timeStamp: number }) => void, o: object) => void;
      };
      w.addEventListener('click', (e) => (w.__arlClickAt = e.timeStamp), { capture: true, once: true });
    });
    await page.click('[data-testid="compare-selected"]');
    const m = await waitForRender(cdp, errors);
    if (m.clickAt === null) throw new Error('the click on "Compare selected" was not recorded');
    await settle(page);
    return {
      load,
      click_to_render_ms: m.sinceNavMs - m.clickAt,
      mount_to_render_ms: m.sinceMountMs,
      data_ms: m.dataMs,
      draw_ms: m.drawMs,
      api_ms: m.apiMs,
      charts_drawn: m.chartsDrawn,
    };
  } finally {
    await context.close();
  }
}

function saveProfile(load: number, trace: string): ProfileReport {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `bench-ui-${load}.trace.json`), trace);
  const r = analyzeTrace(trace);
  writeFileSync(join(RESULTS_DIR, `bench-ui-${load}.cpuprofile`), JSON.stringify(r.cpuprofile));
  return r;
}

/** Mean over the traced loads of the top trace events and JS functions by self time, up to first render. */
function printProfiles(ps: ProfileReport[]): void {
  const top = Number(args.top);
  const mean = (rows: { key: string; ms: number }[]) => {
    const m = new Map<string, number>();
    for (const r of rows) m.set(r.key, (m.get(r.key) ?? 0) + r.ms / ps.length);
    return [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  };
  const busy = ps.reduce((a, p) => a + p.busyMs, 0) / ps.length;
  const cpu = ps.reduce((a, p) => a + p.cpuMs, 0) / ps.length;
  console.log(
    `\nProfile (${ps.length} traced loads, mean; the sampler's overhead included): main thread busy ${busy.toFixed(0)} ms (CPU ${cpu.toFixed(0)} ms) of ${(ps.reduce((a, p) => a + p.renderAtMs, 0) / ps.length).toFixed(0)} ms navigation → first render`,
  );
  const last = ps[ps.length - 1];
  console.log(
    `Main-thread tasks ≥ 5 ms CPU up to first render, last load (inner events: name, wall ms):\n| at ms | wall ms | CPU ms | inside |\n|---|---|---|---|`,
  );
  for (const t of last.tasks) console.log(`| ${t.atMs.toFixed(0)} | ${t.wallMs.toFixed(1)} | ${t.cpuMs.toFixed(1)} | ${t.what} |`);
  console.log('| trace event (self, wall) | ms |\n|---|---|');
  for (const [k, ms] of mean(ps.flatMap((p) => p.byEvent.map((e) => ({ key: e.name, ms: e.ms })))))
    console.log(`| ${k} | ${ms.toFixed(1)} |`);
  console.log('| JS function (self, sampled wall) | ms |\n|---|---|');
  for (const [k, ms] of mean(ps.flatMap((p) => p.byFunction.map((e) => ({ key: `${e.name} ${e.where}`, ms: e.ms })))))
    console.log(`| ${k} | ${ms.toFixed(1)} |`);
  console.log(
    `files: ${join(RESULTS_DIR, 'bench-ui-<load>.cpuprofile')} (DevTools → Performance → Load profile), bench-ui-<load>.trace.json`,
  );
}

main().catch((e) => {
  console.error(`bench:ui failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
