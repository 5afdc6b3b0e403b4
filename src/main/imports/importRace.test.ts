/**
 * Two imports of the same file at once (two processes: two stores on one data directory) make one run: the
 * "already imported" check is made again under the catalog lock when the built run joins the catalog, so the
 * one that comes second reports the first's run (before: two identical runs). `again` still imports a copy.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';
import { importLogs } from './importLogs';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-import-race-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('the same file imported by two stores at once becomes one run; the other names it', async () => {
  const log = join(dir, 'train.log');
  let text = '';
  for (let i = 0; i < 3000; i++) text += `step:${i} - actor/entropy:0.5 - actor/grad_norm:1.${i % 10} - critic/score/mean:0.${i % 7}\n`;
  await writeFile(log, text);
  const data = join(dir, 'data');
  const a = await RunStore.open(data);
  const b = await RunStore.open(data);
  try {
    const [ra, rb] = await Promise.all([importLogs(a, [log]), importLogs(b, [log])]);
    const runs = await a.listRuns();
    expect(runs).toHaveLength(1);
    const winner = ra.runIds.length === 1 ? ra : rb;
    const loser = winner === ra ? rb : ra;
    expect(winner.runIds).toEqual([runs[0].id]);
    expect(winner.steps).toBe(3000);
    expect(loser).toMatchObject({ runIds: [], steps: 0, duplicateOf: [runs[0].id] });
    const copy = await importLogs(b, [log], { again: true });
    expect(copy.runIds).toHaveLength(1);
    expect(await a.listRuns()).toHaveLength(2);
  } finally {
    await a.close();
    await b.close();
  }
});
