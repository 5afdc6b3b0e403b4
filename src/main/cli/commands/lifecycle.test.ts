/**
 * after a kill -9 of the process training a run, any CLI command notices the dead owner
 * (the run is interrupted, not "running" with an ETA), `runs delete` works, `arlarena resume RUN` continues it
 * from its checkpoint, and `arlarena stop RUN` stops a run another session manager trains.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../../store/runStore';
import { SessionManager } from '../../sessions/sessionManager';
import runs from './runs';
import resume from './resume';
import stop from './stop';
import { syntheticJobs } from '../../testing/jobs/index';
import { testCliContext } from '../../testing/testContext';

const ctx = (dataDir: string) => testCliContext(dataDir, { jobs: syntheticJobs() });

/** The pid of a process that has exited (what a kill -9 leaves in the run's .owner file). */
function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-e', '']);
    c.on('exit', () => resolve(c.pid!));
  });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-life-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A run killed at step 3 with a checkpoint at step 2, as the synthetic test job writes them. */
async function killedRun(store: RunStore, seed: number): Promise<string> {
  const r = await store.createRun({
    preset: 'test',
    env: 'sokoban',
    seed,
    totalSteps: 6,
    config: { steps: 6, checkpointEvery: 2 },
    status: 'running',
  });
  await store.appendMetrics(
    r.id,
    [1, 2, 3].map((step) => ({ step, values: { 'actor/grad_norm': 0.1, 'perf/wall_s': step } })),
  );
  await store.saveCheckpoint(r.id, { step: 2, files: { 'state.txt': new TextEncoder().encode(`step 2 seed ${seed}`) }, meta: {} });
  await store.updateRun(r.id, { step: 3, etaSeconds: 30 });
  await writeFile(join(store.runDir(r.id), '.owner'), JSON.stringify({ pid: await deadPid(), since: new Date().toISOString() }));
  return r.id;
}

describe('CLI and dead owners', () => {
  it('a killed run shows as interrupted in the CLI, can be deleted, and resume continues it from its checkpoint', async () => {
    const store = await RunStore.open(dir);
    const a = await killedRun(store, 1);
    const b = await killedRun(store, 2);
    await store.close();

    const list = ctx(dir);
    expect(await runs.run(['--json'], list.ctx)).toBe(0);
    const rows = list
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.status)).toEqual(['interrupted', 'interrupted']);
    expect(list.err()).toMatch(new RegExp(`run ${a} was being trained by process \\d+, which is gone; marked interrupted`));

    const del = ctx(dir);
    expect(await runs.run(['delete', b], del.ctx)).toBe(0);
    expect(del.out()).toContain(`deleted ${b}`);

    const res = ctx(dir);
    expect(await resume.run([a, '--json'], res.ctx)).toBe(0);
    expect(JSON.parse(res.out())).toMatchObject({ runId: a, status: 'completed', step: 6 });
    const again = await RunStore.open(dir);
    expect((await again.readMetrics(a)).map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6]);
    await again.close();
  }, 60_000);

  it('stop asks the process training the run to stop it; the run ends stopped with a checkpoint', async () => {
    const store = await RunStore.open(dir);
    const mgr = new SessionManager({ store, ...syntheticJobs(), concurrency: 1, flushMs: 50 });
    const info = await mgr.startNew({ preset: 'test', env: 'sokoban', seed: 3, totalSteps: 400, config: { steps: 400, stepMs: 50 } });
    while ((store.cached(info.runId)?.step ?? 0) < 2) await new Promise((r) => setTimeout(r, 50));
    const c = ctx(dir);
    expect(await stop.run([info.runId, '--wait', '30', '--json'], c.ctx)).toBe(0);
    expect(JSON.parse(c.out()).status).toBe('stopped');
    expect(await mgr.waitFor(info.runId)).toBe('stopped');
    expect((await store.checkpointSteps(info.runId)).length).toBeGreaterThan(0);
    await mgr.dispose();
    await store.close();
  }, 60_000);
});
