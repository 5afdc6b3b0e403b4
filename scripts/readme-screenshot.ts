/**
 * Makes the README's screenshot (docs/images/lab.png) the way the end-to-end tests see the app: synthetic runs
 * (`arlarena runs synth`, checked by the detector) in a temporary data directory, `arlarena serve` on it, and
 * Debian's Chromium through playwright-core. Needs a built app (`npm run build`) and /usr/bin/chromium (or
 * CHROMIUM_PATH).
 *
 *   npx tsx scripts/readme-screenshot.ts [--view compare|run] [--out docs/images/lab.png]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { launchBrowser } from '../e2e/support/browser';
import { ROOT, startLab } from '../e2e/support/lab';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

function synth(dataDir: string, shape: string, name: string, seed: number): string {
  const r = spawnSync(
    process.execPath,
    [
      join(ROOT, 'bin', 'arlarena.mjs'),
      '--data-dir',
      dataDir,
      'runs',
      'synth',
      '--steps',
      '150',
      '--shape',
      shape,
      '--seed',
      String(seed),
      '--name',
      name,
      '--check',
      '--json',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`runs synth --shape ${shape} failed (${r.status}): ${r.stderr}`);
  return (JSON.parse(r.stdout.trim().split('\n').pop()!) as { runId: string }).runId;
}

async function main(): Promise<void> {
  const view = arg('--view', 'compare');
  const out = resolve(ROOT, arg('--out', join('docs', 'images', 'lab.png')));
  const dataDir = mkdtempSync(join(tmpdir(), 'arlarena-shot-'));
  try {
    const calm = synth(dataDir, 'calm', 'steady (synthetic)', 1);
    const collapse = synth(dataDir, 'cispo_collapse', 'collapsing (synthetic)', 2);
    const lab = await startLab({ dataDir });
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
      const page = await context.newPage();
      const path = view === 'compare' ? `/?view=compare&runs=${calm},${collapse}` : `/?view=run&id=${collapse}`;
      await page.goto(`${lab.origin}${path}#token=${lab.token}`, { waitUntil: 'load' });
      await page.waitForSelector('main[data-ready="true"]', { timeout: 30_000 });
      const undrawn = page.locator('.chart-card .chart[data-drawn="true"][data-rendered="false"], .chart-card .chart[data-pending="true"]');
      const t0 = Date.now();
      while (!((await page.locator('.chart-card').count()) > 0 && (await undrawn.count()) === 0)) {
        if (Date.now() - t0 > 30_000) throw new Error('the charts were not drawn within 30 s');
        await page.waitForTimeout(100);
      }
      await page.screenshot({ path: out, type: 'png' });
      process.stdout.write(`wrote ${out} (${Math.round(statSync(out).size / 1024)} kB)\n`);
    } finally {
      await browser.close();
      await lab.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
