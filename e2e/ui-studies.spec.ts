/**
 * The Studies view against the real backend: a study stored in the data dir (as `arlarena arena --study`
 * writes it, over four runs in the run store) shows its table with intervals and verdicts, links each seed
 * to its run, and opens Compare on the env's runs grouped by preset.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../src/main/store/runStore';
import { writeStudy, type StudyState } from '../src/main/app/studies/studyFiles';
import { openLabSession, screenshot, type LabSession } from './support/browser';

let app: LabSession;
let page: Page;
const ids: string[] = [];

/** A stored run with a preset in its config (what Compare groups by) and a short success curve. */
async function storedRun(store: RunStore, preset: string, seed: number): Promise<string> {
  const rec = await store.createRun({
    preset,
    env: 'sokoban',
    seed,
    config: { preset, seed, env: { name: 'sokoban' } },
    totalSteps: 3,
    status: 'completed',
  });
  await store.appendMetrics(
    rec.id,
    [1, 2, 3].map((step) => ({ step, values: { 'episode/success_rate': 0.1 * step * seed } })),
  );
  return rec.id;
}

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'arlarena-e2e-studies-'));
  const store = await RunStore.open(dataDir);
  try {
    for (const [preset, seed] of [
      ['grpo', 1],
      ['grpo', 2],
      ['cispo', 1],
      ['cispo', 2],
    ] as const)
      ids.push(await storedRun(store, preset, seed));
    await store.flush();
  } finally {
    await store.close();
  }
  const outcome = (preset: string, seed: number, greedy: number) => ({
    env: 'sokoban',
    preset,
    seed,
    steps: 10,
    heldOutGreedy: greedy,
    heldOutSampled: greedy / 2,
    finalTrainSuccess: 0.4,
    bestTrainSuccess: 0.5,
    firstCriticalStep: null,
    stepsToThreshold: null,
  });
  const state: StudyState = {
    version: 1,
    name: 'demo',
    createdAt: '2026-12-01T00:00:00.000Z',
    plan: {
      command: 'arlarena arena --study demo --presets grpo,cispo --seeds 2',
      envs: ['sokoban'],
      presets: ['grpo', 'cispo'],
      seeds: [1, 2],
      steps: 10,
      model: null,
      sets: {},
      baseline: 'grpo',
      episodes: 100,
      threshold: 0.5,
    },
    entries: [
      { env: 'sokoban', preset: 'grpo', seed: 1, runId: ids[0], status: 'completed', wallSeconds: 1, outcome: outcome('grpo', 1, 0.4) },
      { env: 'sokoban', preset: 'grpo', seed: 2, runId: ids[1], status: 'completed', wallSeconds: 1, outcome: outcome('grpo', 2, 0.5) },
      { env: 'sokoban', preset: 'cispo', seed: 1, runId: ids[2], status: 'completed', wallSeconds: 1, outcome: outcome('cispo', 1, 0.1) },
      { env: 'sokoban', preset: 'cispo', seed: 2, runId: ids[3], status: 'completed', wallSeconds: 1, outcome: outcome('cispo', 2, 0.2) },
    ],
  };
  await writeStudy(dataDir, state);
  app = await openLabSession({ dataDir, path: '/?view=studies' });
  page = app.page;
});

afterAll(async () => {
  await app?.close();
});

describe('Studies view', () => {
  it('shows the table with intervals and the paired verdict', async () => {
    await page.waitForSelector('[data-testid="study-table"][data-env="sokoban"]');
    const cispo = page.locator('tr[data-preset="cispo"]');
    // both seeds 30 points below GRPO: a constant gap, so "worse"
    expect(await cispo.locator('[data-testid="verdict"]').innerText()).toBe('worse');
    expect(await cispo.innerText()).toContain('-30.0');
    expect(await page.locator('tr[data-preset="grpo"]').innerText()).toMatch(/45\.0 \[\d/);
    expect(await page.locator('[data-testid="study"]').innerText()).toContain('4/4 runs done');
    await screenshot(page, 'ui-studies');
  });

  it('links a cell to its run', async () => {
    await page.locator('tr[data-preset="cispo"] .runs a', { hasText: 's2' }).click();
    await page.waitForSelector('main[data-view="run"]');
    expect(page.url()).toContain(`id=${ids[3]}`);
    await page.goBack();
    await page.waitForSelector('[data-testid="study-table"]');
  });

  it("opens Compare on the env's runs grouped by preset", async () => {
    await page.getByRole('button', { name: 'Compare by preset' }).click();
    await page.waitForSelector('main[data-view="compare"]');
    const url = new URL(page.url());
    expect(url.searchParams.get('group')).toBe('preset');
    expect(url.searchParams.get('runs')!.split(',').sort()).toEqual([...ids].sort());
    // The select offers "preset" only once the runs' configs have loaded; until then it shows "No grouping".
    await expect.poll(() => page.locator('select[aria-label="Group by"]').inputValue(), { timeout: 10_000 }).toBe('preset');
    expect(app.problems).toEqual([]);
  });
});
