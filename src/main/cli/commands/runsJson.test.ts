/**
 * `arlarena runs rename|tag|delete … --json` prints one JSON object, as every command that prints a result does with
 * --json (README: "those that print results take --json"): the three printed their text line and ignored the flag.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RunStore } from '../../store/runStore';
import { writeSyntheticRun } from '../../store/synthetic';
import { testCliContext } from '../../testing/testContext';
import runs from './runs';

const work = mkdtempSync(join(tmpdir(), 'arlarena-runs-json-'));
const data = join(work, 'data');
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('arlarena runs rename / tag / delete --json', () => {
  it('each prints one JSON object naming the run and what it now is', async () => {
    const store = await RunStore.open(data);
    const id = (await writeSyntheticRun(store, { steps: 5, name: 'before' })).id;
    await store.close();
    const json = async (args: string[]): Promise<unknown> => {
      const c = testCliContext(data);
      expect(await runs.run([...args, '--json'], c.ctx), c.err()).toBe(0);
      return JSON.parse(c.out());
    };
    expect(await json(['rename', id, 'after'])).toEqual({ runId: id, name: 'after' });
    expect(await json(['tag', id, 'a, b,a'])).toEqual({ runId: id, tags: ['a', 'b'] });
    expect(await json(['delete', id])).toEqual({ runId: id, deleted: true });
  });
});
