/**
 * The report and study folders' temp files (b7644c3): the next write there removes what killed writes left. By age
 * alone (older than a minute) it also removed a live write's temp stalled that long — a ladder writing its ledger
 * on a loaded disk, beside a second process writing the same folder. A temp named with its writer's pid is now
 * removed once that writer is gone, whatever its age, and kept while it runs; a temp without a pid by age as before.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { testLadderPlan } from '../../testing/ladderPlan';
import { ledgerHeader, writeLedger } from './ledger';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-report-temps-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => c.on('exit', r));
  return c.pid!;
}

async function temp(name: string, ageMs: number): Promise<void> {
  await writeFile(join(dir, name), 'partial');
  const t = new Date(Date.now() - ageMs);
  await utimes(join(dir, name), t, t);
}

it("a ledger write keeps a live writer's stalled temp and removes a gone writer's at once", async () => {
  // pid 1 started at boot, before the temp's last change two minutes ago: a live writer that stalled (as a ladder
  // process of this host stalled mid-write reads), not one handed a dead writer's pid.
  await temp('.summary.json.1-0-3.tmp', 120_000);
  const dead = await deadPid();
  await temp(`.README.md.${dead}-0-1.tmp`, 0);
  await temp('.old-unnamed.tmp', 120_000);
  await temp('.fresh-unnamed.tmp', 0);
  await writeLedger(
    dir,
    ledgerHeader(
      'rt',
      testLadderPlan({ command: 'arlarena ladder --study rt', levels: [0], presets: ['grpo'], seeds: [1], steps: 3, episodes: 2 }),
      null,
    ),
    [],
  );
  expect((await readdir(dir)).sort()).toEqual(['.fresh-unnamed.tmp', '.summary.json.1-0-3.tmp', 'ledger.jsonl']);
});
