/**
 * A bundle import's stage folder beside the runs (RunStore.newStageDir) names its writer as every temp does since
 * the temps carried writerTag (pid, start in ticks, host): named by pid and start alone, a stage another host was
 * filling in a shared data dir (a network share, a data dir bind-mounted into two containers) was judged by this
 * host's processes at the store's open, and removed under its live import. Another host's stage is judged by its
 * age; the names older versions wrote keep their rule (by this host's pids, or by age without a pid).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { WRITER_TAG, writerTag } from '../platform/process';
import { RunStore } from './runStore';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-stage-writer-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("a stage names its writer; another host's is kept until unchanged for an hour, this host's dead writer's goes at once", async () => {
  const store = await RunStore.open(dir);
  const mine = store.newStageDir();
  await mkdir(mine);
  expect(basename(mine)).toMatch(new RegExp(`^\\.import-${WRITER_TAG}-[0-9a-f]+$`));
  expect(basename(mine).startsWith(`.import-${writerTag()}-`)).toBe(true);
  await store.close();
  const host = /h([0-9a-f]{8})$/.exec(writerTag())![1]!;
  const elsewhere = host === '00000000' ? '00000001' : '00000000';
  const runs = join(dir, 'runs');
  // pid 999999999 is no process here; on another host it may be a live import's
  const young = join(runs, `.import-p999999999s1h${elsewhere}-aaaaaaaaaaaa`);
  const old = join(runs, `.import-p999999999s1h${elsewhere}-bbbbbbbbbbbb`);
  const deadHere = join(runs, `.import-p999999999s1h${host}-cccccccccccc`);
  const olderVersion = join(runs, '.import-999999999-1-dddddddddddd');
  const noPid = join(runs, '.import-eeeeeeeeeeee');
  for (const d of [young, old, deadHere, olderVersion, noPid]) await mkdir(d);
  const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
  await utimes(old, twoHoursAgo, twoHoursAgo);
  const again = await RunStore.open(dir);
  await again.listRuns();
  await again.close();
  expect(existsSync(mine), 'this live process’s stage').toBe(true);
  expect(existsSync(young), 'another host’s stage changed now').toBe(true);
  expect(existsSync(old), 'another host’s stage unchanged for two hours').toBe(false);
  expect(existsSync(deadHere), 'a stage of no process here').toBe(false);
  expect(existsSync(olderVersion), 'an older version’s stage of no process').toBe(false);
  expect(existsSync(noPid), 'a stage without a pid, changed now').toBe(true);
});
