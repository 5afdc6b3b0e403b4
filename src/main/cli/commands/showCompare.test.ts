/**
 * `arlarena show RUN RUN…`: saved runs side by side on the command line (new-user walkthrough: Compare existed in the
 * app and over its API, and `show` took exactly one RUN). One column per run, the config values that differ and only
 * those, each metric's latest value per run; --json with the same; a RUN that is not there named, exit 1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunStore } from '../../store/runStore';
import { writeSyntheticRun } from '../../store/synthetic';
import { testCliContext } from '../../testing/testContext';
import show from './show';

const work = mkdtempSync(join(tmpdir(), 'arlarena-show-side-'));
const data = join(work, 'data');
afterAll(() => rmSync(work, { recursive: true, force: true }));

let calm = '';
let collapsing = '';
beforeAll(async () => {
  const store = await RunStore.open(data);
  calm = (await writeSyntheticRun(store, { steps: 30, shape: 'calm', seed: 1, name: 'calm one' })).id;
  collapsing = (await writeSyntheticRun(store, { steps: 40, shape: 'cispo_collapse', seed: 2, name: 'cispo one', preset: 'cispo' })).id;
  await store.close();
});

describe('arlarena show RUN RUN…', () => {
  it('prints one column per run: what each is, the config that differs, the latest metrics', async () => {
    const c = testCliContext(data);
    expect(await show.run(['calm one', 'cispo one', '--metrics', 'episode/success_rate,actor/grad_norm'], c.ctx)).toBe(0);
    const lines = c.out().split('\n');
    expect(lines[0]).toMatch(/^\s+calm one\s+cispo one$/);
    expect(lines.find((l) => l.startsWith('id '))).toMatch(new RegExp(`^id\\s+${calm}\\s+${collapsing}$`));
    expect(lines.find((l) => l.startsWith('progress'))).toMatch(/step 30 of 30\s+step 40 of 40$/);
    expect(lines.find((l) => l.startsWith('env · preset · seed'))).toMatch(/sokoban · synthetic · 1\s+sokoban · cispo · 2$/);
    // The two configs differ in shape and steps only (collapseAt and nanAt are null in both).
    expect(c.out()).toContain('config that differs (2 keys; the rest are equal):');
    expect(lines.find((l) => l.startsWith('  synthetic.shape'))).toMatch(/calm\s+cispo_collapse$/);
    expect(lines.find((l) => l.startsWith('  synthetic.steps'))).toMatch(/30\s+40$/);
    expect(c.out()).not.toContain('synthetic.collapseAt');
    expect(lines.find((l) => l.startsWith('  Success rate'))).toMatch(/^ {2}Success rate\s+\S+\s+\S+$/);
    expect(lines.find((l) => l.startsWith('  Gradient norm'))).toBeDefined();
  });

  it('--json: the records, configDiff and latest per run, in the order asked', async () => {
    const c = testCliContext(data);
    expect(await show.run([collapsing.slice(-6), calm, '--json', '--metrics', 'actor/grad_norm,not/logged'], c.ctx)).toBe(0);
    const j = JSON.parse(c.out()) as {
      runs: { id: string }[];
      configDiff: Record<string, unknown[]>;
      latest: Record<string, ({ step: number; value: number } | null)[]>;
    };
    expect(j.runs.map((r) => r.id)).toEqual([collapsing, calm]);
    expect(j.configDiff).toEqual({ 'synthetic.shape': ['cispo_collapse', 'calm'], 'synthetic.steps': [40, 30] });
    expect(Object.keys(j.latest)).toEqual(['actor/grad_norm']);
    expect(j.latest['actor/grad_norm'].map((x) => x?.step)).toEqual([40, 30]);
  });

  it('a RUN that is not there is named, exit 1; more than 8 is bad usage', async () => {
    const c = testCliContext(data);
    expect(await show.run([calm, 'nope'], c.ctx)).toBe(1);
    expect(c.err()).toMatch(/^arlarena show: no run matches "nope" \(2 runs in .*\)\n$/);
    expect(c.out()).toBe('');
    await expect(
      show.run(
        Array.from({ length: 9 }, () => calm),
        testCliContext(data).ctx,
      ),
    ).rejects.toThrow(/9 runs: at most 8 side by side/);
  });
});
