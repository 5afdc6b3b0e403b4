/** Cluster → Add with empty fields says what is missing in the page (it did nothing). */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openLabSession, type LabSession } from './support/browser';

let s: LabSession;
beforeAll(async () => {
  s = await openLabSession({ path: '/?view=cluster' });
});
afterAll(async () => {
  await s?.close();
});

it('names the missing field when Add is clicked with empty fields', async () => {
  const { page, problems } = s;
  await page.click('[data-testid="remote-add"]');
  const err = page.locator('[data-testid="add-error"]');
  await err.waitFor({ timeout: 10_000 });
  expect(await err.getAttribute('data-field')).toBe('name');
  expect(await err.innerText()).toMatch(/Name the cluster first/);
  await page.fill('[data-testid="remote-name"]', 'gpu-lab');
  await page.click('[data-testid="remote-add"]');
  await page.waitForSelector('[data-testid="add-error"][data-field="url"]', { timeout: 10_000 });
  expect(await err.innerText()).toMatch(/dashboard URL/);
  expect(problems).toEqual([]);
});
