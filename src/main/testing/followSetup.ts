/**
 * The setup of the log-follower tests (imports/follow*.test.ts, tensorboardName.test.ts): before each test a new
 * temporary folder with a run store in its data/; after it, the followers the test started (pushed to `followers`)
 * stopped, then the store closed and the folder removed — a follower left polling would write into a closed store.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { LogFollower } from '../imports/follow';
import { RunStore } from '../store/runStore';

export interface FollowTestSetup {
  /** This test's folder (the logs a test writes go here; the store is in its data/). */
  readonly dir: string;
  readonly store: RunStore;
  /** The followers to stop after the test. */
  readonly followers: LogFollower[];
}

/** Registers the hooks (call it at a file's or a describe's top level); the fields are this test's. */
export function followTestSetup(prefix: string): FollowTestSetup {
  let dir = '';
  let store: RunStore | null = null;
  const followers: LogFollower[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), prefix));
    store = await RunStore.open(join(dir, 'data'));
  });
  afterEach(async () => {
    for (const f of followers.splice(0)) await f.stop();
    await store?.close();
    store = null;
    await rm(dir, { recursive: true, force: true });
  });
  return {
    get dir() {
      return dir;
    },
    get store() {
      if (!store) throw new Error('followTestSetup: the store is opened before each test (use it inside a test)');
      return store;
    },
    followers,
  };
}
