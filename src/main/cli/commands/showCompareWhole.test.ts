/**
 * `arlarena show RUN RUN…` compares whole configs: with the runs table's cut values (400 paths, strings cut at 200
 * characters) two imported verl-sized configs that differ only past their 400th path, or two prompt templates that
 * differ past their 200th character, printed 'config: the same in every run'.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { RunStore } from '../../store/runStore';
import { testCliContext } from '../../testing/testContext';
import show from './show';

const work = mkdtempSync(join(tmpdir(), 'arlarena-show-whole-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A config of 450 paths (an imported verl config has hundreds) and a long prompt template. */
function bigConfig(lastLr: number, templateEnd: string): Record<string, unknown> {
  const keys: Record<string, number> = {};
  for (let i = 0; i < 449; i++) keys[`k${String(i).padStart(3, '0')}`] = i;
  return { actor: keys, optim: { lr: lastLr }, prompt: { template: `${'You are a helpful agent. '.repeat(10)}${templateEnd}` } };
}

it('config values past the runs table’s cuts are compared: the 450th path and a template’s 251st character', async () => {
  const data = join(work, 'data');
  const store = await RunStore.open(data);
  const mk = (name: string, config: Record<string, unknown>) =>
    store.createRun({ name, preset: 'verl', env: 'sokoban', seed: 1, config, totalSteps: 1, status: 'completed' });
  await mk('first', bigConfig(1e-6, 'Answer.'));
  await mk('second', bigConfig(2e-6, 'Think.'));
  await store.close();

  const c = testCliContext(data);
  expect(await show.run(['first', 'second', '--json'], c.ctx)).toBe(0);
  const j = JSON.parse(c.out()) as { configDiff: Record<string, unknown[]> };
  expect(Object.keys(j.configDiff).sort()).toEqual(['optim.lr', 'prompt.template']);
  expect(j.configDiff['optim.lr']).toEqual([1e-6, 2e-6]);

  const text = testCliContext(data);
  expect(await show.run(['first', 'second'], text.ctx)).toBe(0);
  expect(text.out()).toContain('config that differs (2 keys; the rest are equal):');
});
