/** What `arlarena show|resume|stop|… RUN` accepts: an id, a unique prefix, the short id the app shows, a unique name. */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from './runStore';
import { shortId } from '../../shared/shortId';

let dir: string;
let store: RunStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-find-'));
  store = await RunStore.open(dir, { lock: { staleMs: 60_000, timeoutMs: 2_000 } });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const base = { preset: 'sampo', env: 'sokoban', seed: 7, config: {}, totalSteps: 10 };

it("finds a run by the 6-character short id the app shows (its id's last characters), as well as by id prefix and name", async () => {
  const a = await store.createRun({ ...base, name: 'alpha' });
  const b = await store.createRun({ ...base, name: 'beta' });
  expect((await store.findRun(shortId(a.id))).id).toBe(a.id);
  expect((await store.findRun(shortId(b.id))).id).toBe(b.id);
  expect((await store.findRun(a.id)).id).toBe(a.id);
  expect((await store.findRun('beta')).id).toBe(b.id);
});

it('refuses an id ending two runs share, naming them, and a too-short ending', async () => {
  const a = await store.createRun({ ...base, id: 'run-one-abc123', name: 'one' });
  const b = await store.createRun({ ...base, id: 'run-two-abc123', name: 'two' });
  await expect(store.findRun('abc123')).rejects.toThrow(
    /"abc123" matches 2 runs: run-(one|two)-abc123, run-(one|two)-abc123; type more of the id/,
  );
  expect(b.id).toBe('run-two-abc123');
  await expect(store.findRun('123')).rejects.toThrow(/no run matches "123"/);
  // A prefix wins over an ending.
  expect((await store.findRun('run-one')).id).toBe(a.id);
});
