/**
 * Two resumes of one run asked at once (a double click, two API calls): the run trains in one worker, and the second
 * resume is refused naming the run as queued or running here. submit awaits the run's claim (its owner file) between
 * its check for a live session and its record of the new one, so both calls passed the check; the first was pumped
 * into its launch meanwhile and the second queued the run again, which launched a second worker writing the same run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';
import { SessionManager, SessionError } from './sessionManager';
import { syntheticJobs } from '../testing/jobs/index';

let dir: string;
let store: RunStore;
let mgr: SessionManager | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-double-resume-'));
  store = await RunStore.open(dir);
});
afterEach(async () => {
  await mgr?.dispose();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

it('two resumes of one interrupted run at once launch one worker; the second is refused', async () => {
  const { spawn, validateConfig } = syntheticJobs();
  const launched: string[] = [];
  mgr = new SessionManager({
    store,
    validateConfig,
    spawn: (runId) => {
      launched.push(runId);
      return spawn(runId);
    },
    concurrency: 2,
    flushMs: 50,
    throttleMs: 250,
  });
  const rec = await store.createRun({
    preset: 'test',
    env: 'sokoban',
    seed: 1,
    config: { steps: 20, stepMs: 5 },
    totalSteps: 20,
    status: 'interrupted',
  });
  // The second call's claim is the slower write (a loaded disk): the first run is launched meanwhile.
  const claim = store.claimRun.bind(store);
  let claims = 0;
  store.claimRun = async (id, pid) => {
    if (++claims === 2) await new Promise((r) => setTimeout(r, 300));
    return claim(id, pid);
  };
  const answers = await Promise.allSettled([mgr.resume(rec.id), mgr.resume(rec.id)]);
  expect(answers.map((a) => a.status).sort()).toEqual(['fulfilled', 'rejected']);
  const refused = answers.find((a) => a.status === 'rejected')!.reason as SessionError;
  expect(refused).toBeInstanceOf(SessionError);
  expect(refused.message).toMatch(new RegExp(`run ${rec.id} is already (queued|running)`));
  expect(await mgr.waitFor(rec.id)).toBe('completed');
  await new Promise((r) => setTimeout(r, 300));
  expect(launched, 'the workers launched').toEqual([rec.id]);
});
