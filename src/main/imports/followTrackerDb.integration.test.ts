/**
 * A tracker's database handed to the app's Follow (follow.start → FollowManager → LogFollower): MLflow's and
 * Trackio's SQLite files written by the trackers' own packages. The app's follow tails logs and TensorBoard
 * folders; a database is polled by `arlarena follow` (followTrackers.ts). It used to be refused as "in no known
 * format (its content is binary …)", which is untrue: the lab imports and follows these databases. Now it is
 * refused naming the tracker and the two ways that work, and no run is made.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { venvPython } from '../../../tests/support/peers';
import { RunStore } from '../store/runStore';
import { FollowManager } from './followManager';
import { ImportError } from './importLogs';

const PEER = resolve(import.meta.dirname, '../../../tests/peers/trackers_peer.py');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-follow-trackerdb-'));
  execFileSync(venvPython('trackers'), [PEER, 'write', dir, '--only', 'mlflow-sqlite,trackio'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 170_000,
  });
}, 180_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

for (const [tracker, rel, name] of [
  ['MLflow', 'mlflow.db', 'an MLflow SQLite store'],
  ['Trackio', join('trackio', 'arl-peer.db'), 'a Trackio database'],
] as const) {
  it(`${tracker}: the app's Follow refuses the database naming it as ${name}, with arlarena follow and Import as the ways in, and makes no run`, async () => {
    const path = join(dir, rel);
    const store = await RunStore.open(join(dir, `data-${tracker}`));
    const fm = new FollowManager(store, () => undefined);
    try {
      const e = await fm.start(path).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ImportError);
      expect((e as ImportError).code).toBe('BAD_OPTION');
      const msg = (e as Error).message;
      expect(msg).toContain(`${path} is ${name}`);
      expect(msg).not.toMatch(/no known format/);
      expect(msg).toContain(`arlarena follow ${path}`);
      expect(msg).toMatch(/Import/);
      expect(fm.list()).toEqual([]);
      expect(await readdir(store.runsDir).catch(() => [])).toEqual([]);
    } finally {
      await fm.dispose();
      await store.close();
    }
  }, 30_000);
}
