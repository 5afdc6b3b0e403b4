/**
 * UI helpers shared by the renderer's specs (ui-*.spec.ts): navigation and starting a run through the
 * New run view's Customise editor, exactly as a user would.
 */
import type { Page } from 'playwright-core';

/** A run small enough to finish in a few minutes on two CPU cores (real trainer, real environment). */
export const TINY: Record<string, string> = {
  'training.steps': '3',
  'rollout.tasksPerStep': '2',
  'rollout.groupSize': '2',
  'env.maxSteps': '4',
  'rollout.maxResponseTokens': '24',
  'training.validateEvery': '0',
  'training.valEpisodes': '4',
  'training.checkpointEvery': '0',
  'training.sampleTrajectories': '2',
  'optim.miniBatchRows': '8',
  // Behaviour-clone a tiny warm start in the run itself (independent of shipped checkpoints), briefly.
  'warmStart.source': 'scratch',
  'warmStart.bcUpdates': '10',
  'warmStart.bcBatchRows': '16',
};

/**
 * Polls `check` until it is true. (The app's CSP forbids eval, so Playwright's string predicates cannot run
 * in the page; locator reads from the test side work everywhere.)
 */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 300): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    if (await check()) return;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function gotoView(page: Page, view: 'runs' | 'new' | 'compare' | 'alerts' | 'about'): Promise<void> {
  await page.click(`nav a[data-nav="${view}"]`);
  await page.waitForSelector(`main[data-view="${view}"]`);
}

export function field(page: Page, path: string) {
  return page.locator(`[id="f-${path}"]`);
}

/**
 * Sets one editor field (opening its folded sections) and waits until the backend has re-checked it. Steps and
 * seed are not editor fields: they sit at the top of the New run view and are typed there.
 */
export async function setField(page: Page, path: string, value: string): Promise<void> {
  if (path === 'training.steps' || path === 'seed') {
    const box = page.locator(`[data-testid="${path === 'seed' ? 'run-seed' : 'run-steps'}"]`);
    await box.fill(value);
    await box.press('Tab');
    return;
  }
  const input = field(page, path);
  // Machine-facing sections are folded inside "Advanced": open every closed fold around the field, outermost first.
  const closed = page.locator('[data-testid="config-editor"] details:not([open])').filter({ has: input });
  while (!(await input.isVisible()) && (await closed.count()) > 0) await closed.first().locator(':scope > summary').click();
  const kind = await input.evaluate((el: { tagName: string; type?: string }) =>
    el.type === 'checkbox' ? 'checkbox' : el.tagName.toLowerCase(),
  );
  if (kind === 'checkbox') await input.setChecked(value === 'true');
  else if (kind === 'select') await input.selectOption(value);
  else {
    await input.fill(value);
    await input.press('Tab');
  }
}

/**
 * New run → pick `env` → Customise `preset` → set `overrides` (+ a name) → Start. Returns the new run's id
 * once the run detail view shows it.
 */
export async function startCustomRun(
  page: Page,
  opts: { preset: string; env: string; name: string; overrides: Record<string, string> },
): Promise<string> {
  await gotoView(page, 'new');
  await page.check(`input[name="env"][value="${opts.env}"]`);
  // Start from a fresh editor: close one left open (Customise toggles it).
  const open = page.locator('[data-testid="config-editor"]');
  if (await open.isVisible()) await open.locator('button', { hasText: 'Close' }).click();
  await page.locator(`[data-preset="${opts.preset}"] button`, { hasText: 'Customise' }).click();
  await page.waitForSelector('[data-testid="config-editor"]');
  await page.locator('[data-testid="config-editor"] input[placeholder]').first().fill(opts.name);
  for (const [path, value] of Object.entries(opts.overrides)) await setField(page, path, value);
  const start = page.locator('[data-testid="start-custom"]');
  // The start button is enabled once the backend has accepted every field.
  await waitUntil(
    'the customised config to validate',
    async () => (await start.isEnabled()) && (await page.locator('[data-testid="config-editor"] .err').count()) === 0,
    30_000,
  );
  await start.click();
  await page.waitForSelector('[data-testid="run-detail"]', { timeout: 30_000 });
  const id = await page.locator('[data-testid="run-detail"]').getAttribute('data-run-id');
  if (!id) throw new Error('the run detail view has no run id');
  return id;
}
