/**
 * The Ladder view against the real backend and a tiny real ladder: the app opens on an empty data dir (the empty
 * state), then `arlarena ladder` — the real CLI in its own process, the real trainer — trains two pressure levels ×
 * two presets × one seed of a tiny model into that data dir while the page is open. Half way the view says what is
 * incomplete; at the end it draws one panel per level with a survival curve per preset, its table matches the
 * summary.json the CLI wrote, and curves, rows and seeds open their runs. Screenshots in light and dark.
 * Trains 4 tiny runs (≈ 1 min on 2 cores). Then a ladder known by its ledger, as a fresh clone has it: `arlarena
 * ladder --resume` takes every run from a ledger whose lines name runs this data dir lacks, two of them reused from
 * the tiny ladder (one of which is here) — the view links only the runs it holds and shows the others' lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStudy, writeStudy } from '../src/main/app/studies/studyFiles';
import { TINY_LADDER, tinyCliSets } from '../src/main/testing/tinyCli';
import { SURVIVAL_GRID } from '../src/renderer/lib/ladderChart';
import { openLabSession, screenshot, screenshotThemes, type LabSession } from './support/browser';
import { ROOT, runCli } from './support/lab';

const TINY = tinyCliSets();

let app: LabSession;
let page: Page;
let dataDir: string;
let outDir: string;
let cli: ChildProcess | null = null;
let cliExit: Promise<number | null>;
let cliErr = '';

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'arlarena-e2e-ladder-'));
  outDir = mkdtempSync(join(tmpdir(), 'arlarena-e2e-ladder-out-'));
  app = await openLabSession({ dataDir, path: '/?view=ladder' });
  page = app.page;
});

afterAll(async () => {
  if (cli?.pid && cli.exitCode === null) {
    try {
      process.kill(cli.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await app?.close();
});

/** The ladder's runs per (level, preset), from the level studies the CLI keeps in the data dir. */
async function runsOf(level: number, preset?: string): Promise<string[]> {
  const s = await readStudy(dataDir, `tiny-p${level}`);
  return s.entries.filter((e) => preset === undefined || e.preset === preset).map((e) => e.runId!);
}

/** The ladder summaries committed in the checkout, by name. */
function committedLadders(): string[] {
  const dir = join(ROOT, 'resources', 'studies');
  const names = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory());
  return names
    .filter((d) => {
      try {
        return (JSON.parse(readFileSync(join(dir, d.name, 'summary.json'), 'utf8')) as { kind?: string }).kind === 'ladder';
      } catch {
        return false;
      }
    })
    .map((d) => d.name)
    .sort((a, b) => a.localeCompare(b));
}

async function reload(): Promise<void> {
  await page.getByRole('button', { name: 'Reload' }).click();
}

describe('Ladder view', () => {
  it('is in the navigation, and says how to start a ladder when there is none (or shows a committed one)', async () => {
    expect(await page.locator('nav a[data-nav="ladder"]').innerText()).toContain('Ladder');
    // The data dir is empty; the checkout may commit ladder summaries (resources/studies/NAME/summary.json), which
    // the view shows — statistics only — instead of the empty state.
    const committed = committedLadders();
    if (committed.length === 0) {
      await page.waitForSelector('[data-testid="empty-state"]');
      const empty = await page.locator('[data-testid="empty-state"]').innerText();
      expect(empty).toContain('No ladder yet');
      expect(empty).toContain('arlarena ladder');
      await screenshot(page, 'ui-ladder-empty');
    } else {
      await page.waitForSelector(`[data-testid="ladder"][data-source="committed"][data-ladder="${committed[0]}"]`);
      expect(await page.locator('[data-testid="ladder-committed"]').innerText()).toContain(
        `resources/studies/${committed[0]}/summary.json`,
      );
      // A fresh clone: the ledger beside the summary lists every finished run, none of them in this (empty) data dir,
      // so each shows its line and none is a link.
      const ledger = join(ROOT, 'resources', 'studies', committed[0], 'ledger.jsonl');
      if (existsSync(ledger)) {
        const lines = readFileSync(ledger, 'utf8').trim().split('\n').length - 1;
        expect(await page.locator('[data-testid="run-line"]').count()).toBe(lines);
        expect(await page.locator('[data-testid="run-link"]').count()).toBe(0);
        expect(await page.locator('[data-testid="ladder-not-stored"]').innerText()).toMatch(
          new RegExp(`^${lines} of its finished runs are not in this data dir`),
        );
        await page.locator('[data-testid="run-line"]').first().click();
        const where = await page.locator('[data-testid="run-detail"] [data-testid="run-where"]').innerText();
        expect(where).toContain(`resources/studies/${committed[0]}/ledger.jsonl`);
        expect(await page.locator('[data-testid="compare-cell"]:not([disabled])').count()).toBe(0);
      }
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshotThemes(page, 'ui-ladder-committed');
    }
  });

  it('shows a ladder while it trains: the finished level, and what is still incomplete', async () => {
    cli = spawn(
      process.execPath,
      [
        join(ROOT, 'bin', 'arlarena.mjs'),
        '--data-dir',
        dataDir,
        'ladder',
        ...TINY_LADDER,
        '--study',
        'tiny',
        '--out',
        outDir,
        ...TINY,
        '--json',
      ],
      { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    cli.stderr!.on('data', (d: Buffer) => (cliErr = (cliErr + d.toString()).slice(-10_000)));
    cliExit = new Promise((resolve) => cli!.once('exit', (code) => resolve(code)));
    // Level 0 (two runs) finishes before level 3 starts: wait for that moment through the API.
    await expect
      .poll(
        async () => {
          const res = await app.lab.call('ladders.list');
          // The data dir's ladder (committed summaries in the checkout are listed after it).
          const tiny = res.ok ? res.value.find((l) => l.source === 'data' && l.name === 'tiny') : undefined;
          return tiny ? tiny.done : -1;
        },
        { timeout: 300_000, interval: 500 },
      )
      .toBeGreaterThanOrEqual(2);
    const list = await app.lab.call('ladders.list');
    if (!list.ok) throw new Error(list.error.message);
    const tiny = list.value.find((l) => l.source === 'data' && l.name === 'tiny')!;
    if (tiny.done < tiny.planned) {
      await reload();
      await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-ladder="tiny"]');
      expect(await page.locator('[data-testid="ladder"]').getAttribute('data-complete')).toBe('false');
      expect(await page.locator('[data-testid="ladder-partial"]').innerText()).toMatch(/Incomplete.*pressure 3: (not started|[01]\/2)/);
      expect(await page.locator('[data-testid="ladder-level"][data-level="0"] [data-testid="level-progress"]').innerText()).toBe(
        '2/2 runs',
      );
      await screenshot(page, 'ui-ladder-partial');
    } else {
      // The machine was fast enough that level 3 finished between two polls: nothing partial left to see.
      console.warn('ui-ladder: the ladder finished before the partial state could be looked at');
    }
  }, 360_000);

  it('draws one panel per level with a curve per preset, and a table that matches the summary the CLI wrote', async () => {
    const code = await Promise.race([cliExit, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 300_000))]);
    expect(code, cliErr).toBe(0);
    await reload();
    await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-complete="true"]');
    const summary = JSON.parse(readFileSync(join(outDir, 'tiny', 'summary.json'), 'utf8')) as {
      rows: Array<{
        level: number;
        preset: string;
        survival: [number, number][];
        collapsedShare: { mean: number; ci95: [number, number] };
        medianCollapseStep: number | null;
        vsBaseline: { logRankP: number; verdict: string } | null;
      }>;
    };
    expect(await page.locator('[data-testid="ladder-level"]').count()).toBe(2);
    for (const level of [0, 3]) {
      const panel = page.locator(`[data-testid="ladder-level"][data-level="${level}"]`);
      const chart = panel.locator('[data-testid="survival-chart"]');
      await expect.poll(() => chart.getAttribute('data-rendered'), { timeout: 20_000 }).toBe('true');
      const curves = panel.locator('[data-testid="curve"]');
      expect(await curves.count()).toBe(2);
      let censoredCurves = 0;
      for (const preset of ['grpo', 'gspo']) {
        const row = summary.rows.find((r) => r.level === level && r.preset === preset)!;
        const curve = panel.locator(`[data-testid="curve"][data-cell="${preset}"]`);
        expect(JSON.parse((await curve.getAttribute('data-points'))!)).toEqual(row.survival);
        // One seed: it collapsed (the curve ends at 0, no tick) or it is censored at its last step (one tick).
        const survived = row.survival[row.survival.length - 1][1] === 1;
        expect(Number(await curve.getAttribute('data-censored'))).toBe(survived ? 1 : 0);
        if (survived) censoredCurves++;
        const tr = panel.locator(`[data-testid="ladder-table"] tr[data-cell="${preset}"]`);
        expect(await tr.locator('[data-testid="seeds"]').innerText()).toBe('1/1');
        const collapsed = await tr.locator('[data-testid="collapsed"]').innerText();
        expect(collapsed).toContain(`${Math.round(100 * row.collapsedShare.mean)} % [`);
        expect(collapsed).toContain(`${Math.round(100 * row.collapsedShare.ci95[1])} %]`);
        expect(await tr.locator('[data-testid="median"]').innerText()).toBe(
          row.medianCollapseStep === null ? 'not reached' : String(row.medianCollapseStep),
        );
        const verdict = await tr.locator('[data-testid="verdict"]').innerText();
        expect(verdict.split('\n')[0].trim()).toBe(row.vsBaseline ? row.vsBaseline.verdict : '(baseline)');
        if (row.vsBaseline) expect(verdict).toContain('vs grpo');
        if (row.vsBaseline) {
          const p = row.vsBaseline.logRankP;
          expect(await tr.locator('[data-testid="p"]').innerText()).toBe(p < 0.001 ? '< 0.001' : p.toFixed(3));
        }
      }
      // A line per preset, plus a series of censor ticks for each whose seed ended without collapsing.
      expect(Number(await chart.getAttribute('data-series'))).toBe(2 + censoredCurves);
    }
    for (const dark of [false, true]) {
      await page.emulateMedia({ colorScheme: dark ? 'dark' : 'light' });
      await page.waitForTimeout(300);
      await screenshot(page, `ui-ladder-${dark ? 'dark' : 'light'}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }, 360_000);

  it("a curve's name and a row's Compare open that cell's runs in Compare; a seed opens its run", async () => {
    const gspo3 = await runsOf(3, 'gspo');
    await page.locator('[data-testid="ladder-level"][data-level="3"] [data-testid="curve"][data-cell="gspo"] a').click();
    await page.waitForSelector('main[data-view="compare"]');
    expect(new URL(page.url()).searchParams.get('runs')!.split(',')).toEqual(gspo3);
    await page.goBack();
    await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-complete="true"]');

    const grpo0 = await runsOf(0, 'grpo');
    await page.locator('[data-testid="ladder-level"][data-level="0"] tr[data-cell="grpo"] [data-testid="compare-cell"]').click();
    await page.waitForSelector('main[data-view="compare"]');
    expect(new URL(page.url()).searchParams.get('runs')!.split(',')).toEqual(grpo0);
    await page.goBack();
    await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-complete="true"]');

    await page.locator('[data-testid="ladder-level"][data-level="0"] tr[data-cell="grpo"] .runs a', { hasText: 's1' }).click();
    await page.waitForSelector('main[data-view="run"]');
    expect(new URL(page.url()).searchParams.get('id')).toBe(grpo0[0]);
    await page.goBack();
    await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-complete="true"]');
  });

  it("the level's Compare groups its runs by preset, and a click on a curve opens that curve's runs", async () => {
    const level3 = await runsOf(3);
    await page.locator('[data-testid="ladder-level"][data-level="3"] [data-testid="compare-level"]').click();
    await page.waitForSelector('main[data-view="compare"]');
    const url = new URL(page.url());
    expect(url.searchParams.get('group')).toBe('preset');
    expect(url.searchParams.get('runs')!.split(',').sort()).toEqual([...level3].sort());
    await page.goBack();
    await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-complete="true"]');

    // On the canvas: the curves of this tiny ladder run along the top of the grid (nobody collapsed in 2 steps) or
    // drop from it; a quarter across the plot, at y = 100 % (the grid's top edge), is on a curve.
    const chart = page.locator('[data-testid="ladder-level"][data-level="3"] [data-testid="survival-chart"]');
    await expect.poll(() => chart.getAttribute('data-rendered')).toBe('true');
    const box = (await chart.boundingBox())!;
    const plotWidth = box.width - SURVIVAL_GRID.left - SURVIVAL_GRID.right;
    const at = { x: box.x + SURVIVAL_GRID.left + plotWidth * 0.25, y: box.y + SURVIVAL_GRID.top };
    // Hovering names every curve at that step, also two that lie on top of each other.
    await page.mouse.move(at.x, at.y);
    const tip = chart.locator('div', { hasText: 'share not yet collapsed' }).last();
    await tip.waitFor({ timeout: 10_000 });
    expect(await tip.innerText()).toMatch(/^step 0: share not yet collapsed\ngrpo: \d+ %.*\ngspo: \d+ %/s);
    await page.mouse.click(at.x, at.y);
    await page.waitForSelector('main[data-view="compare"]', { timeout: 10_000 });
    const picked = new URL(page.url()).searchParams.get('runs')!.split(',');
    expect([await runsOf(3, 'grpo'), await runsOf(3, 'gspo')]).toContainEqual(picked);
    expect(app.problems).toEqual([]);
  });

  it('a ladder resumed from its ledger: runs this data dir lacks show their line, reused runs say from which study', async () => {
    // The tiny ladder's ledger as another ladder's ("clone"), as a fresh clone finds it committed: level 0's GRPO run
    // reused from tiny (here), its GSPO run trained elsewhere; level 3's GRPO run reused from tiny but not here, its
    // GSPO run here. --resume takes all four from the ledger and trains none.
    const cloneOut = mkdtempSync(join(tmpdir(), 'arlarena-e2e-ladder-clone-'));
    const [head, ...lines] = readFileSync(join(outDir, 'tiny', 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    head.name = 'clone';
    head.plan.command = head.plan.command.replace('--study tiny', '--study clone').replace(`--out ${outDir}`, `--out ${cloneOut}`);
    const line = (level: number, preset: string) => lines.find((l) => l.level === level && l.preset === preset);
    const here = line(0, 'grpo').runId as string;
    line(0, 'grpo').reusedFrom = { study: 'tiny', runId: here };
    line(0, 'gspo').runId = '20261205-000000-sokoban-gspo-e15e00';
    line(3, 'grpo').runId = '20261204-230000-sokoban-grpo-0ff51e';
    line(3, 'grpo').reusedFrom = { study: 'tiny', runId: line(3, 'grpo').runId };
    mkdirSync(join(cloneOut, 'clone'));
    writeFileSync(join(cloneOut, 'clone', 'ledger.jsonl'), `${[head, ...lines].map((l) => JSON.stringify(l)).join('\n')}\n`);
    runCli(dataDir, ['ladder', ...TINY_LADDER, '--study', 'clone', '--out', cloneOut, ...TINY, '--resume']);
    const summary = JSON.parse(readFileSync(join(cloneOut, 'clone', 'summary.json'), 'utf8')) as { reused: { runs: number } };
    expect(summary.reused.runs).toBe(2);

    // The last test left Compare open: back to the ladder view, then pick clone in its list.
    await page.goto(`${app.lab.origin}/?view=ladder#token=${app.lab.token}`);
    await page.waitForSelector('[data-testid="ladder"]');
    await page.selectOption('select[aria-label="Ladder"]', 'data:clone');
    await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-ladder="clone"][data-complete="true"]');
    const reused = await page.locator('[data-testid="ladder-reused"]').innerText();
    expect(reused).toContain(
      'Reused, not trained by this ladder: 2 run(s) — 2 from study tiny (level 0 grpo · sokoban seeds 1; level 3 grpo · sokoban seeds 1)',
    );
    expect(await page.locator('[data-testid="ladder-not-stored"]').innerText()).toMatch(/^2 of its finished runs are not in this data dir/);
    const row = (level: number, preset: string) =>
      page.locator(`[data-testid="ladder-level"][data-level="${level}"] tr[data-cell="${preset}"]`);
    // Stored runs are links (a reused one marked r); the others are their ledger lines, with no link.
    expect(await row(0, 'grpo').locator('[data-testid="run-link"]').innerText()).toBe('s1r');
    expect(await row(0, 'grpo').locator('[data-testid="cell-reused"]').innerText()).toBe('1 reused from study tiny');
    expect(await row(3, 'grpo').locator('[data-testid="cell-reused"]').innerText()).toBe('1 reused from study tiny');
    expect(await row(0, 'gspo').locator('[data-testid="run-link"]').count()).toBe(0);
    expect(await row(3, 'grpo').locator('[data-testid="run-link"]').count()).toBe(0);
    expect(await row(3, 'gspo').locator('[data-testid="run-link"]').count()).toBe(1);
    expect(await row(3, 'grpo').locator('[data-testid="compare-cell"]').isDisabled()).toBe(true);
    expect(await row(0, 'grpo').locator('[data-testid="compare-cell"]').isDisabled()).toBe(false);

    // A line opens under its level's table: seed, outcome, held-out, and where its data is.
    await row(3, 'grpo').locator('[data-testid="run-line"]').click();
    const detail = page.locator('[data-testid="ladder-level"][data-level="3"] [data-testid="run-detail"]');
    const l3 = line(3, 'grpo');
    const outcome = l3.collapseStep === null ? `no collapse in ${l3.steps} steps` : `collapsed at step ${l3.collapseStep}`;
    expect(await detail.innerText()).toContain(`grpo · seed 1 · ${l3.status} · ${outcome}`);
    expect(await detail.locator('[data-testid="run-where"]').innerText()).toBe(
      `reused from study tiny (its run ${l3.runId}): not in this data dir — its outcome is tiny's ledger line, copied into ` +
        `${cloneOut}/clone/ledger.jsonl; its metrics and checkpoints are in the data dir that trained tiny`,
    );
    // Scrolled to the top first: a full-page shot of a scrolled page draws the sticky navigation bar mid-page.
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshotThemes(page, 'ui-ladder-ledger');

    // The stored reused run opens its page (tiny's run).
    await row(0, 'grpo').locator('[data-testid="run-link"]').click();
    await page.waitForSelector('main[data-view="run"]');
    expect(new URL(page.url()).searchParams.get('id')).toBe(here);
    await page.goBack();
    await page.waitForSelector('[data-testid="ladder"][data-ladder="clone"]');
    expect(app.problems).toEqual([]);
  }, 120_000);

  it('a row whose baseline has no runs at its level says so instead of "–"', async () => {
    // The tiny ladder's level studies as another ladder's ("orphan"), level 3's GRPO runs gone (a resume whose ledger
    // lost them): level 3's GSPO row has no baseline to be compared with.
    for (const level of [0, 3]) {
      const s = await readStudy(dataDir, `tiny-p${level}`);
      await writeStudy(dataDir, {
        ...s,
        name: `orphan-p${level}`,
        plan: { ...s.plan, command: s.plan.command.replace('--study tiny', '--study orphan') },
        entries: s.entries.map((e) =>
          level === 3 && e.preset === 'grpo' ? { ...e, runId: null, status: null, wallSeconds: null, outcome: null } : e,
        ),
      });
    }
    await page.goto(`${app.lab.origin}/?view=ladder#token=${app.lab.token}`);
    await page.waitForSelector('[data-testid="ladder"]');
    await page.selectOption('select[aria-label="Ladder"]', 'data:orphan');
    await page.waitForSelector('[data-testid="ladder"][data-source="data"][data-ladder="orphan"]');
    const verdict = (level: number, preset: string) =>
      page.locator(`[data-testid="ladder-level"][data-level="${level}"] tr[data-cell="${preset}"] [data-testid="verdict"]`).innerText();
    expect(await verdict(3, 'gspo')).toBe('no runs of baseline grpo');
    expect(await verdict(3, 'grpo')).toBe('(baseline)');
    expect((await verdict(0, 'gspo')).split('\n')[0].trim()).not.toContain('no runs');
    expect(app.problems).toEqual([]);
  });
});
