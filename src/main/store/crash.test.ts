/**
 * kill -9 of a process writing the run database, repeated: the database must always open cleanly.
 * 15 iterations by default (the unit suite stays fast on a loaded 2-core machine); ARLARENA_KILL_ITERATIONS=30
 * or more for a longer soak.
 * Most kills land while the writer holds the data directory's lock (runs.json.lock): the next process must take
 * it over at once (its holder's pid is gone) rather than wait for it to go stale.
 * The writer (crashWriter.ts) is bundled once (testProcess.ts) so each spawn is a plain `node` start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from './runStore';
import { bundleTestProcess } from '../testing/testProcess';

const ITERATIONS = Number(process.env.ARLARENA_KILL_ITERATIONS ?? 15);
let work: string;
let writer: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'arl-kill-'));
  writer = await bundleTestProcess(new URL('../testing/crashWriter.ts', import.meta.url), join(work, 'crashWriter.mjs'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function runAndKill(dataDir: string, seed: number, killAfterMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, dataDir, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += String(d)));
    child.stdout.on('data', (d) => {
      if (String(d).includes('ready')) setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve();
      else reject(new Error(`writer exited by itself (code ${code}): ${err}`));
    });
  });
}

describe('crash safety', () => {
  it(`kill -9 of a writer, ${ITERATIONS} times, never corrupts the run database`, async () => {
    const dataDir = join(work, 'data');
    let seed = 1;
    // A deterministic spread of kill delays (0–300 ms after the writer is ready).
    for (let i = 0; i < ITERATIONS; i++) {
      await runAndKill(dataDir, seed++, (i * 37) % 300);
      // A lock the killed writer held must not block: only its dead pid can let a write in within 2 s here.
      const store = await RunStore.open(dataDir, { lock: { staleMs: 60_000, timeoutMs: 2_000 } });
      expect(store.warnings, `iteration ${i}`).toEqual([]);
      // The catalog file itself is always complete JSON.
      JSON.parse(await readFile(join(dataDir, 'runs.json'), 'utf8'));
      const runs = await store.listRuns();
      expect(runs.length).toBeGreaterThan(0);
      for (const r of runs) {
        const rec = await store.getRun(r.id);
        expect(rec?.id).toBe(r.id);
        const steps = (await store.readMetrics(r.id)).map((m) => m.step);
        for (let k = 1; k < steps.length; k++) expect(steps[k]).toBe(steps[k - 1] + 1);
        const c = await store.loadLatestCheckpoint(r.id);
        if (c) expect([...c.files['w.bin']].every((b) => b === c.step % 256)).toBe(true);
      }
      // No stray checkpoint temp dirs count as checkpoints, and no half-written record is left in place.
      for (const r of runs) expect((await readdir(join(dataDir, 'runs', r.id))).includes('run.json')).toBe(true);
      await store.updateRun(runs[0].id, { tags: [`checked-${i}`] });
      expect(await readdir(dataDir)).not.toContain('runs.json.lock');
    }
    const store = await RunStore.open(dataDir);
    const total = (await store.listRuns()).length;
    expect(total).toBeGreaterThanOrEqual(Math.floor(ITERATIONS / 3));
  }, 240_000);
});
