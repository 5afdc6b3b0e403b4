/**
 * Live follow with the real parsers: a real verl log written in pieces cut anywhere (mid-line), ending with
 * exactly the run a one-shot import makes; and a TensorBoard run folder that gains an event file written by
 * TensorBoard's own writer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { peerPython } from '../../../tests/support/peers';
import { describeRealRuns } from '../../../tests/support/realRuns';
import { RunStore } from '../store/runStore';
import { LogFollower } from './follow';
import { importLogs } from './importLogs';
import { until as untilWithin } from '../testing/until';

const until = (what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> => untilWithin(what, cond, ms, 25);

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-follow-real-'));
  store = await RunStore.open(join(dir, 'data'));
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describeRealRuns('follow on a real verl log', (root) => {
  it('1a written in 7 pieces cut mid-line: 435 steps, the same records as a one-shot import, and the finished log counts as already imported', async () => {
    const bytes = await readFile(join(root, 'verl-console/Qwen2.5-0.5B-bsz256_2-prompt1024-resp512-0.567.log'));
    const p = join(dir, 'train.log');
    await writeFile(p, bytes.subarray(0, 1000));
    const f = await LogFollower.start(store, p, { pollMs: 40 });
    const cuts = [1000, 90_001, 180_017, 300_000, 420_123, 510_000, 560_321, bytes.length];
    for (let i = 1; i < cuts.length; i++) {
      await appendFile(p, bytes.subarray(cuts[i - 1], cuts[i]));
      const before = (await store.readMetrics(f.runId)).length;
      await until(`piece ${i}`, async () => i === cuts.length - 1 || (await store.readMetrics(f.runId)).length > before);
    }
    const info = await f.stop();
    expect(info).toMatchObject({ status: 'completed', step: 434, steps: 435 });
    const followed = await store.readMetrics(f.runId);
    const oneShot = await importLogs(store, [join(root, 'verl-console/Qwen2.5-0.5B-bsz256_2-prompt1024-resp512-0.567.log')], {
      again: true,
    });
    const imported = await store.readMetrics(oneShot.runIds[0]);
    expect(followed).toEqual(imported);
    const rec = (await store.getRun(f.runId))!;
    expect(rec).toMatchObject({ status: 'completed', preset: 'gae', env: 'gsm8k', source: { format: 'verl-console', following: false } });
    expect(rec.alerts.map((a) => [a.rule, a.firstStep])).toEqual(
      (await store.getRun(oneShot.runIds[0]))!.alerts.map((a) => [a.rule, a.firstStep]),
    );
    const again = await importLogs(store, [p]);
    expect(again.duplicateOf).toContain(f.runId);
  });
});

describe('follow on a TensorBoard run folder', () => {
  it('reads the event files it has, then one TensorBoard writes into the folder later', async () => {
    const run = join(dir, 'tb', 'run1');
    await mkdir(run, { recursive: true });
    const script = resolve(import.meta.dirname, '..', '..', '..', 'tests', 'peers', 'tensorboard_peer.py');
    const write = async (events: unknown[]) => {
      const spec = join(dir, `spec-${Date.now()}.json`);
      await writeFile(spec, JSON.stringify({ files: [{ dir: run, events }] }));
      return JSON.parse(execFileSync(peerPython(), [script, 'write', spec], { encoding: 'utf8' })) as string[];
    };
    await write([
      [1, 1e9, [['actor/grad_norm', 'simple', 1.5]]],
      [2, 1e9 + 1, [['actor/grad_norm', 'simple', 1.25]]],
    ]);
    const f = await LogFollower.start(store, run, { pollMs: 40 });
    await until('the first file', async () => (await store.readMetrics(f.runId)).length === 2);
    await write([
      [3, 1e9 + 2, [['actor/grad_norm', 'simple', 'nan']]],
      [4, 1e9 + 3, [['actor/grad_norm', 'simple', 1.0]]],
    ]);
    await until('the second file', async () => (await store.readMetrics(f.runId)).length === 4);
    const info = await f.stop();
    expect(info).toMatchObject({ status: 'completed', step: 4, format: 'tensorboard' });
    // The folder above it is a tree of runs: following it is refused, naming the run folder to follow.
    await expect(LogFollower.start(store, join(dir, 'tb'), { pollMs: 40 })).rejects.toThrow(
      /holds TensorBoard runs in sub-folders \(run1\): follow one run folder/,
    );
    const m = await store.readMetrics(f.runId);
    expect(m.map((r) => r.step)).toEqual([1, 2, 3, 4]);
    expect(Number.isNaN(m[2].values['actor/grad_norm'])).toBe(true);
    const rec = (await store.getRun(f.runId))!;
    expect(rec.source!.sha256).toHaveLength(2);
    expect(rec.alerts.some((a) => a.rule === 'non_finite' && a.firstStep === 3)).toBe(true);
  });
});
