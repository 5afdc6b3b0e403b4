/**
 * New run and the trajectory viewer.
 *
 * New run: steps, seed and the environment sit at the top, above the preset cards; each card says what a click
 * runs (steps, seed, model, batch) and how long it should take here, from the step times of runs trained on this
 * machine, and says what that estimate rests on; the Customise editor folds its machine-facing sections.
 * Trajectory viewer: the prompt the agent saw, a picture of the sokoban grid, won/lost and train/validation filters.
 *
 * Data: three completed grpo runs on sokoban written through the real RunStore with the real preset config, the
 * backend the app reports, and known wall times (8, 10 and 30 s per step: median 10 s); one of them holds real
 * sokoban episodes (the env's expert, which wins, and a fixed bad policy, which loses) in both splits.
 * Screenshots (light and dark) land in test-results/ui-newrun-*.png.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/core/config/index';
import { createEnv, expertResponse, formatResponse, runEpisode, type TestbedEnv } from '../src/core/envs/index';
import { setupCompute } from '../src/main/compute/index';
import { RunStore } from '../src/main/store/runStore';
import type { Trajectory } from '../src/shared/api';
import { openLabSession, screenshotThemes, type LabSession } from './support/browser';
import { gotoView, waitUntil } from './uiHelpers';

let work = '';
let app: LabSession;
let page: Page;
let withEpisodes = '';
const PER_STEP = [8, 10, 30];
const STEPS_DONE = 4;
const defaults = resolveConfig('grpo', 'sokoban').config!;

/** A real sokoban episode as the trainer stores it (prompt, observation, parsed think/action per turn). */
function episode(env: TestbedEnv, seed: number, split: 'train' | 'val', policy: 'expert' | 'stuck'): Trajectory {
  const ep = runEpisode(env, seed, (e) => (policy === 'expert' ? expertResponse(e) : formatResponse('stay put', 'still')), 0);
  return {
    step: 2,
    split,
    env: 'sokoban',
    taskId: ep.taskId,
    uid: `u${seed}`,
    trajUid: `t${seed}-${split}-${policy}`,
    won: ep.won,
    episodeReturn: ep.episodeReturn,
    turns: ep.turns.map((t, i) => ({
      turn: i,
      observation: t.observation,
      prompt: t.prompt,
      response: t.response,
      think: /<think>([\s\S]*?)<\/think>/.exec(t.response)?.[1]?.trim() ?? null,
      action: t.action,
      formatValid: t.formatValid,
      actionValid: t.actionValid,
      reward: t.reward,
    })),
  };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'arlarena-newrun-e2e-'));
  const dataDir = join(work, 'data');
  // The backend the app will report (the same selection its server makes): estimates only count runs trained on it.
  const backend = (await setupCompute({})).info;
  const store = await RunStore.open(dataDir);
  const config = structuredClone(defaults) as unknown as Record<string, unknown>;
  for (const [i, perStep] of PER_STEP.entries()) {
    const rec = await store.createRun({
      preset: 'grpo',
      env: 'sokoban',
      seed: i + 1,
      config,
      totalSteps: STEPS_DONE,
      backend,
      status: 'completed',
    });
    await store.appendMetrics(
      rec.id,
      Array.from({ length: STEPS_DONE }, (_, s) => ({
        step: s + 1,
        values: { 'perf/wall_s': perStep * (s + 1), 'episode/success_rate': 0.25 },
      })),
    );
    if (i === 0) withEpisodes = rec.id;
  }
  const env = createEnv('sokoban');
  const trajs = [
    episode(env, 11, 'train', 'expert'),
    episode(env, 12, 'train', 'stuck'),
    episode(env, 13, 'val', 'expert'),
    episode(env, 14, 'val', 'stuck'),
  ];
  expect(trajs.map((t) => t.won)).toEqual([true, false, true, false]);
  await store.appendTrajectories(withEpisodes, trajs);
  await store.flush();
  await store.close();
  app = await openLabSession({ dataDir });
  page = app.page;
}, 120_000);

afterAll(async () => {
  await app?.close();
  if (work && !process.env.ARLARENA_E2E_KEEP_DATA) rmSync(work, { recursive: true, force: true });
});

const shots = (name: string): Promise<void> => screenshotThemes(page, name);

const plan = (preset: string) => page.locator(`[data-testid="plan-${preset}"]`);

describe('New run: what a preset card will run', () => {
  it('puts steps and seed above the presets and says what each card runs, with a measured estimate', async () => {
    await gotoView(page, 'new');
    await page.check('input[name="env"][value="sokoban"]');
    await waitUntil(
      'the grpo card to show its estimate',
      async () => (await plan('grpo').getAttribute('data-estimated')) === 'true',
      20_000,
    );
    const stepsBox = await page.locator('[data-testid="run-steps"]').boundingBox();
    const firstCard = await page.locator('[data-preset]').first().boundingBox();
    expect(stepsBox && firstCard && stepsBox.y < firstCard.y).toBe(true);

    const text = await plan('grpo').innerText();
    expect(text).toContain(
      `Runs ${defaults.training.steps} steps · seed ${defaults.seed} · ${defaults.model.size} model · ${defaults.rollout.tasksPerStep * defaults.rollout.groupSize} rollouts/step`,
    );
    // Median of 8, 10 and 30 s per step = 10 s, times the preset's 40 steps.
    expect(defaults.training.steps).toBe(40);
    expect(text).toContain('≈ 6 min 40 s on this machine');
    expect(text).toMatch(/Median 10 s\/step over the latest 3 grpo runs of sokoban · nano model · 16 rollouts\/step · \S+ trained here/);
    // Another preset of the same env, model and batch: the same runs, said to be of other presets.
    expect(await plan('sampo').innerText()).toContain('3 runs of other presets');
    await shots('ui-newrun-presets');
  });

  it('follows the steps and seed typed at the top, and refuses a bad seed with the fix', async () => {
    await page.locator('[data-testid="run-steps"]').fill('12');
    await page.locator('[data-testid="run-seed"]').fill('7');
    await waitUntil('the card to follow the typed steps', async () => (await plan('grpo').getAttribute('data-steps')) === '12', 10_000);
    const text = await plan('grpo').innerText();
    expect(text).toContain('Runs 12 steps · seed 7');
    expect(text).toContain('≈ 2 min 00 s on this machine');
    await page.locator('[data-testid="run-seed"]').fill('seven');
    const err = page.locator('[data-section="basics"] .err');
    await err.waitFor({ timeout: 5_000 });
    expect(await err.innerText()).toContain('The seed is a whole number from 0 to 2147483647, e.g. 1 (got "seven")');
    expect(await page.locator('[data-testid="start-grpo"]').isDisabled()).toBe(true);
    await page.locator('[data-testid="run-seed"]').fill('7');
    await waitUntil('the start button to come back', async () => page.locator('[data-testid="start-grpo"]').isEnabled(), 5_000);
  });

  it('says there is no estimate where no run of that env was trained here', async () => {
    await page.check('input[name="env"][value="frozenlake"]');
    await waitUntil('the frozenlake plan', async () => (await plan('grpo').getAttribute('data-estimated')) === 'false', 20_000);
    expect(await plan('grpo').innerText()).toContain('No estimate yet: no run of frozenlake · nano model');
    await page.check('input[name="env"][value="sokoban"]');
    await waitUntil('the sokoban plan again', async () => (await plan('grpo').getAttribute('data-estimated')) === 'true', 20_000);
  });

  it('Customise: steps and seed come from the top, the machine-facing sections are folded under Advanced', async () => {
    await page.locator('[data-preset="grpo"] button', { hasText: 'Customise' }).click();
    const editor = page.locator('[data-testid="config-editor"]');
    await editor.waitFor();
    expect(await page.locator('[id="f-training.steps"]').count()).toBe(0);
    expect(await editor.innerText()).toContain('12 steps · seed 7 (set at the top of the page)');
    const advanced = editor.locator('details[data-section="advanced"]');
    expect(await advanced.getAttribute('open')).toBeNull();
    expect(await page.locator('[id="f-model.size"]').isVisible()).toBe(false);
    expect(await page.locator('[id="f-algorithm.aggregation"]').isVisible()).toBe(true);
    await shots('ui-newrun-customise');
    await editor.locator('button', { hasText: 'Close' }).click();
  });
});

describe('Trajectory viewer', () => {
  const viewer = () => page.locator('[data-testid="trajectory-viewer"]');
  const episodes = () => page.locator('[data-testid="traj-episode"] option').allInnerTexts();

  it('shows the prompt the agent saw and the sokoban grid as a picture', async () => {
    await page.goto(`${app.lab.origin}/?view=run&id=${encodeURIComponent(withEpisodes)}#token=${app.lab.token}`);
    await page.waitForSelector('[data-testid="traj-turn"]', { timeout: 30_000 });
    const grid = viewer().locator('[data-testid="traj-grid"] svg');
    await grid.waitFor();
    // Sokoban's default room is 6 × 6: one cell per symbol of the text observation.
    expect(await grid.locator('rect').count()).toBe(36);
    expect(await grid.getAttribute('aria-label')).toBe('grid world, 6 by 6');
    const prompt = viewer().locator('[data-testid="traj-prompt"] pre');
    expect(await prompt.innerText()).toContain('you are solving a sokoban puzzle');
    await shots('ui-newrun-trajectory');
  });

  it('filters episodes by outcome and split', async () => {
    expect(await episodes()).toHaveLength(4);
    await page.locator('[data-testid="traj-outcome"]').selectOption('won');
    await waitUntil('only won episodes listed', async () => (await episodes()).length === 2, 5_000);
    for (const e of await episodes()) expect(e).toContain('won');
    expect(await page.locator('[data-testid="traj-turn"]').getAttribute('data-won')).toBe('true');

    await page.locator('[data-testid="traj-split"]').selectOption('val');
    await waitUntil('one won validation episode', async () => (await episodes()).length === 1, 5_000);
    expect((await episodes())[0]).toMatch(/^validation · .* · won/);
    expect(await page.locator('[data-testid="traj-turn"]').getAttribute('data-split')).toBe('val');

    await page.locator('[data-testid="traj-outcome"]').selectOption('lost');
    await waitUntil('one lost validation episode', async () => (await episodes()).length === 1, 5_000);
    expect(await page.locator('[data-testid="traj-turn"]').getAttribute('data-won')).toBe('false');
    await page.locator('[data-testid="traj-outcome"]').selectOption('all');
    await page.locator('[data-testid="traj-split"]').selectOption('all');
    await waitUntil('all four again', async () => (await episodes()).length === 4, 5_000);
    expect(app.problems).toEqual([]);
  });
});
