/**
 * A killed follower's restart continues its run (hardening round three: `arlarena follow F` killed with -9, then
 * started again, read the file into a second run). The follower is the real CLI, killed with SIGKILL once it has
 * stored 5 steps; the file then grows; following it again (after a look at the runs marks the dead run
 * interrupted) takes up the same run: steps 1–8 once each, the re-read steps counted as replays, one run.
 */
import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RunStore } from '../store/runStore';
import { LogFollower, SKIP_REPLAYED } from './follow';
import { verlSteps } from '../testing/verlRuns';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-follow-restart-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('follow killed with -9 and started again continues the same run', async () => {
  const log = join(dir, 'train.log');
  const data = join(dir, 'data');
  await writeFile(log, verlSteps(1, 5));
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', data, 'follow', log, '--json'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((r) => child.on('exit', r));
  // Wait until the follower has stored the 5 steps (the newest after two quiet polls).
  const t0 = Date.now();
  let runId = '';
  for (;;) {
    const store = await RunStore.open(data).catch(() => null);
    if (store) {
      const [run] = await store.listRuns();
      if (run && (await store.readMetrics(run.id)).length === 5) runId = run.id;
      await store.close();
    }
    if (runId) break;
    if (Date.now() - t0 > 60_000) throw new Error('the follower never stored 5 steps');
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  await exited;
  await appendFile(log, verlSteps(6, 8));

  const store = await RunStore.open(data);
  try {
    expect((await store.markDeadOwners()).map((d) => d.id)).toEqual([runId]);
    const f = await LogFollower.start(store, log, { pollMs: 40 });
    expect(f.runId).toBe(runId);
    const until = Date.now() + 15_000;
    while ((await store.readMetrics(runId)).length < 8 && Date.now() < until) await new Promise((r) => setTimeout(r, 40));
    const info = await f.stop();
    expect(info.status).toBe('completed');
    expect((await store.readMetrics(runId)).map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const rec = (await store.getRun(runId))!;
    expect(rec.status).toBe('completed');
    expect(rec.source!.skipped[SKIP_REPLAYED]).toBe(5);
    expect(rec.source!.notes.join(' ')).toContain('following continued after step 5');
    expect((await store.listRuns()).map((r) => r.id)).toEqual([runId]);
  } finally {
    await store.close();
  }
}, 120_000);
