/**
 * metricTail (what `arlarena show` reads): the same count, last record and latest values as reading the whole
 * stream, across slice boundaries, with a torn last line and keys logged only now and then.
 */
import { mkdtemp, rm, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RunStore } from './runStore';
import { metricTail } from './metricTail';
import { METRICS_FILE } from './runFiles';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-metric-tail-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('matches a whole read: count, last record, each key latest (slices of 1 MiB crossed), torn tail ignored', async () => {
  const store = await RunStore.open(dir);
  const r = await store.createRun({ preset: 'test', env: 'sokoban', seed: 1, totalSteps: 60_000, config: {} });
  const recs = Array.from({ length: 60_000 }, (_, i) => ({
    step: i + 1,
    values: {
      'actor/entropy': i / 1e5,
      ...(i % 1000 === 7 ? { 'val/success_rate': i / 6e4 } : {}),
      ...(i === 12 ? { rare: Number.NaN } : {}),
    },
  }));
  await store.appendMetrics(r.id, recs);
  await store.flush(r.id);
  const file = join(store.runDir(r.id), METRICS_FILE);
  await appendFile(file, '{"step":60001,"values":{"actor/en');
  const whole = await store.readMetrics(r.id);
  const t = await metricTail(file, ['actor/entropy', 'val/success_rate', 'rare', 'never']);
  expect(t.records).toBe(whole.length);
  expect(t.last).toEqual(whole[whole.length - 1]);
  expect(t.latest.get('actor/entropy')).toEqual({ step: 60_000, value: 59_999 / 1e5 });
  expect(t.latest.get('val/success_rate')).toEqual({ step: 59_008, value: 59_007 / 6e4 });
  expect(t.latest.get('rare')!.step).toBe(13);
  expect(Number.isNaN(t.latest.get('rare')!.value)).toBe(true);
  expect(t.latest.has('never')).toBe(false);
  await store.close();
});
