/**
 * Temps whose writer this machine cannot judge — another machine's, or this machine's before a reboot (writerTag's
 * host part holds the boot, so after a reboot every earlier writer reads as elsewhere, and all of them are gone) —
 * are removed once unchanged for a day (OTHER_MACHINE_MS) by the cleanups that had no age rule: removeDeadTemps (a
 * streamed bundle's, the remotes file's, a token copy in clear) and a log import's staging folder. They were left for
 * good; a younger one stays, as it may be a live writer's on a machine sharing the folder.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { writerTag } from '../platform/process';
import { OTHER_MACHINE_MS, removeDeadTemps } from './atomic';
import { RunStore } from './runStore';
import { importLogs, STAGING_DIR } from '../imports/importLogs';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-other-machine-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const host = /h([0-9a-f]{8})$/.exec(writerTag())![1]!;
/** A writer tag of another machine (or of this one before a reboot): a host part that is not this boot's. */
const elsewhere = `p4242s77h${host === '00000000' ? '00000001' : '00000000'}`;
const aged = async (p: string, ms: number) => {
  const t = new Date(Date.now() - ms);
  await utimes(p, t, t);
};

it("removeDeadTemps removes another machine's temp unchanged for over a day, and keeps a younger one", async () => {
  const file = join(dir, 'remotes.json');
  const old = join(dir, `remotes.json.${elsewhere}.tmp`);
  const young = join(dir, `.remotes.json.${elsewhere}-0-1.tmp`);
  await writeFile(old, '{"token":"x"}');
  await writeFile(young, '{}');
  await aged(old, OTHER_MACHINE_MS + 60_000);
  await aged(young, 60_000);
  await removeDeadTemps(file);
  expect(existsSync(old), 'unchanged for over a day').toBe(false);
  expect(existsSync(young), 'changed a minute ago').toBe(true);
});

it("a log import removes another machine's staging folder unchanged for over a day, and keeps a younger one", async () => {
  const data = join(dir, 'data');
  const store = await RunStore.open(data);
  try {
    const old = join(data, STAGING_DIR, `${elsewhere}-aaaaaa`);
    const young = join(data, STAGING_DIR, `${elsewhere}-bbbbbb`);
    for (const d of [old, young]) await mkdir(d, { recursive: true });
    await aged(old, OTHER_MACHINE_MS + 60_000);
    await aged(young, 60_000);
    const log = join(dir, 'train.log');
    await writeFile(log, 'step:1 - actor/entropy:0.5 - critic/score/mean:0.1\n');
    expect((await importLogs(store, [log])).steps).toBe(1);
    expect(existsSync(old), 'unchanged for over a day').toBe(false);
    expect(existsSync(young), 'changed a minute ago').toBe(true);
  } finally {
    await store.close();
  }
});
