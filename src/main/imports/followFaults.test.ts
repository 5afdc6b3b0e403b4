/**
 * A followed log that goes away or is replaced (hardening round three): deleting it ended the run `failed`
 * (`ENOENT … stat` when the source was copied at stop) although every step was stored; a verl log deleted and
 * recreated as JSONL had its new steps dropped silently and the run marked completed. Now the run keeps its
 * steps and ends `stopped` with the reason, by itself, once the file has been gone for `goneMs`; a file of another
 * format in its place stops the follow saying so; a rotation (gone for less than goneMs, same format) goes on.
 */
import { rename, rm, writeFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LogFollower } from './follow';
import { until } from '../testing/until';
import { followTestSetup } from '../testing/followSetup';
import { verlSteps } from '../testing/verlRuns';

const fx = followTestSetup('arl-follow-faults-');

async function follow(path: string, goneMs: number): Promise<LogFollower> {
  const f = await LogFollower.start(fx.store, path, { pollMs: 40, goneMs });
  fx.followers.push(f);
  return f;
}

const stored = async (id: string) => (await fx.store.readMetrics(id)).map((r) => r.step);

it('a deleted log: the run keeps its steps and ends stopped with the reason, by itself', async () => {
  const p = join(fx.dir, 'train.log');
  await writeFile(p, verlSteps(1, 5));
  const f = await follow(p, 300);
  await until('5 steps', async () => (await stored(f.runId)).length === 5);
  await rm(p);
  const info = await Promise.race([f.done, new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
  expect(info, 'the follow did not end after its file was deleted').not.toBeNull();
  expect(info!.status).toBe('stopped');
  const rec = (await fx.store.getRun(f.runId))!;
  expect(rec.status).toBe('stopped');
  expect(rec.error).toMatch(/train\.log was deleted while it was followed .*the 5 step\(s\) read until then are kept/);
  expect(await stored(f.runId)).toEqual([1, 2, 3, 4, 5]);
});

it('a rotation shorter than goneMs goes on in the same run', async () => {
  const p = join(fx.dir, 'train.log');
  await writeFile(p, verlSteps(1, 3));
  const f = await follow(p, 3000);
  await until('3 steps', async () => (await stored(f.runId)).length === 3);
  await rename(p, `${p}.1`);
  await new Promise((r) => setTimeout(r, 200));
  await writeFile(p, verlSteps(4, 5));
  await appendFile(p, verlSteps(6, 6));
  await until('6 steps', async () => (await stored(f.runId)).length === 6);
  expect((await f.stop()).status).toBe('completed');
});

it('a log replaced by one in another format: following stops saying so; the first steps are kept', async () => {
  const p = join(fx.dir, 'train.log');
  await writeFile(p, verlSteps(1, 5));
  const f = await follow(p, 3000);
  await until('5 steps', async () => (await stored(f.runId)).length === 5);
  await rm(p);
  let jsonl = '';
  for (let i = 6; i <= 10; i++) jsonl += `${JSON.stringify({ step: i, loss: 0.5, reward: i / 10 })}\n`;
  await writeFile(p, jsonl);
  const info = await Promise.race([f.done, new Promise<null>((r) => setTimeout(() => r(null), 5000))]);
  expect(info, 'the follow did not notice the new format').not.toBeNull();
  expect(info!.status).toBe('stopped');
  const rec = (await fx.store.getRun(f.runId))!;
  expect(rec.error).toMatch(
    /was replaced by a file in another format \([\w-]+; it was verl-console\): following stopped, the 5 step\(s\) read from the first file are kept/,
  );
  expect(await stored(f.runId)).toEqual([1, 2, 3, 4, 5]);
});
