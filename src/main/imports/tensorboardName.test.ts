/**
 * A TensorBoard event file imported or followed on its own is named by the folder that holds it, as TensorBoard's
 * run list names runs — never `events.out.tfevents.<time>.<host>`, which says nothing about the run.
 */
import { describe, expect, it } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tensorboardChunks } from '../../core/formats/export/tensorboard';
import type { MetricRecord } from '../../shared/metrics';
import { LogFollower } from './follow';
import { importLogs } from './importLogs';
import { until as untilWithin } from '../testing/until';
import { followTestSetup } from '../testing/followSetup';

const until = (what: string, cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> => untilWithin(what, cond, ms, 25);

const fx = followTestSetup('arl-tbname-');

/** An event file as TensorBoard's writer lays it out: the file_version event, then one event per step. */
function eventFile(steps: number): Uint8Array {
  const records: MetricRecord[] = [];
  for (let s = 1; s <= steps; s++) records.push({ step: s, values: { 'actor/entropy': 1 - s * 0.01, 'actor/grad_norm': 0.5 + s * 0.1 } });
  const parts = [...tensorboardChunks(records, { keys: ['actor/entropy', 'actor/grad_norm'], startWallTime: 1_743_501_588 })];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const FILE = 'events.out.tfevents.1743501588.h100x2-nc80-eastus2';

describe('a TensorBoard event file on its own is named by its run folder', () => {
  it('import', async () => {
    const run = join(fx.dir, 'logs', 'Apr01_09-57-15_seed3');
    await mkdir(run, { recursive: true });
    await writeFile(join(run, FILE), eventFile(4));
    const r = await importLogs(fx.store, [join(run, FILE)]);
    expect(r).toMatchObject({ format: 'tensorboard', steps: 4 });
    expect((await fx.store.getRun(r.runIds[0]))!.name).toBe('Apr01_09-57-15_seed3');
  });

  it('follow: the run is named by the folder from the start, and keeps that name when following ends', async () => {
    const run = join(fx.dir, 'logs', 'grpo-seed7');
    await mkdir(run, { recursive: true });
    await writeFile(join(run, FILE), eventFile(3));
    const f = await LogFollower.start(fx.store, join(run, FILE), { pollMs: 30 });
    fx.followers.push(f);
    expect((await fx.store.getRun(f.runId))!.name).toBe('grpo-seed7');
    await until('3 steps', async () => (await fx.store.readMetrics(f.runId)).length === 3);
    const info = await f.stop();
    expect(info.format).toBe('tensorboard');
    expect((await fx.store.getRun(f.runId))!.name).toBe('grpo-seed7');
  });

  it('follow of a file still empty when following began: renamed to its folder once it shows it is an event file', async () => {
    const run = join(fx.dir, 'logs', 'dapo-run');
    await mkdir(run, { recursive: true });
    const path = join(run, FILE);
    await writeFile(path, new Uint8Array());
    const f = await LogFollower.start(fx.store, path, { pollMs: 30 });
    fx.followers.push(f);
    expect((await fx.store.getRun(f.runId))!.name).toBe(FILE);
    await writeFile(path, eventFile(2));
    await until('the folder name', async () => (await fx.store.getRun(f.runId))!.name === 'dapo-run');
    await until('2 steps', async () => (await fx.store.readMetrics(f.runId)).length === 2);
  });

  it('a name asked for wins', async () => {
    const run = join(fx.dir, 'logs', 'x');
    await mkdir(run, { recursive: true });
    await writeFile(join(run, FILE), eventFile(2));
    const f = await LogFollower.start(fx.store, join(run, FILE), { pollMs: 30, name: 'my run' });
    fx.followers.push(f);
    expect((await fx.store.getRun(f.runId))!.name).toBe('my run');
  });
});
