/**
 * Deterministic kill soak: a writer (killWriter.ts) is killed by SIGKILL at an exact write boundary
 * named on its command line (the store's fault hook, armed by testing/killPoints.ts) — half-way through a JSONL append,
 * before and after an atomic rename, before a checkpoint folder is renamed into place, mid-prune — instead of
 * after a timer. After every kill: the files show what the kill left (a torn metrics/trajectories line for the
 * mid-append kills), the store opens with no warnings, a torn line is skipped on read, steps are contiguous,
 * every listed checkpoint is complete and intact, and the next writer continues the same run cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from './runStore';
import { readJsonl } from './jsonl';
import { bundleTestProcess } from '../testing/testProcess';

let work: string;
let writer: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'arl-soak-'));
  writer = await bundleTestProcess(new URL('../testing/killWriter.ts', import.meta.url), join(work, 'killWriter.mjs'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function runWriter(
  dataDir: string,
  steps: number,
  kill: { at: number; label: string } | null,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve) => {
    const args = [writer, dataDir, String(steps), ...(kill ? [String(kill.at), kill.label] : [])];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

/** (kill point label, index of that point's firing) — '' counts every point. */
const KILLS: ReadonlyArray<[string, number]> = [
  ['jsonl-append', 3],
  ['jsonl-append', 8],
  ['jsonl-append', 13],
  ['atomic-before-rename', 4],
  ['atomic-after-rename', 7],
  ['checkpoint-rename', 2],
  ['checkpoint-prune', 1],
  ['', 5],
  ['', 23],
  ['', 41],
];

async function endsTorn(file: string): Promise<boolean> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.length > 0 && !text.endsWith('\n');
}

describe('deterministic kill soak', () => {
  it(`${KILLS.length} kills at named write boundaries: torn lines skipped, store consistent, run continues`, async () => {
    let tornSeen = 0;
    for (const [label, at] of KILLS) {
      const dataDir = join(work, `d-${label || 'any'}-${at}`);
      // A clean first session, then the session that is killed, then one that continues.
      expect((await runWriter(dataDir, 6, null)).code).toBe(0);
      const killed = await runWriter(dataDir, 12, { at, label });
      expect(killed.signal, `${label}@${at}: ${killed.stderr}`).toBe('SIGKILL');

      const runDir = join(dataDir, 'runs', 'soak');
      const torn = (await endsTorn(join(runDir, 'metrics.jsonl'))) || (await endsTorn(join(runDir, 'trajectories.jsonl')));
      if (label === 'jsonl-append') expect(torn, `${label}@${at} left a torn line`).toBe(true);
      if (torn) tornSeen++;
      const chunk = await readJsonl(join(runDir, 'metrics.jsonl'));
      expect(chunk.badLines).toBe(0);

      const store = await RunStore.open(dataDir, { lock: { staleMs: 60_000, timeoutMs: 2_000 } });
      expect(store.warnings, `${label}@${at}`).toEqual([]);
      JSON.parse(await readFile(join(dataDir, 'runs.json'), 'utf8'));
      const rec = await store.findRun('soak');
      const steps = (await store.readMetrics('soak')).map((m) => m.step);
      expect(steps.length).toBeGreaterThanOrEqual(6);
      steps.forEach((s, i) => expect(s).toBe(i + 1));
      const traj = await store.trajectories('soak');
      expect(traj.steps.every((s) => s % 2 === 0 && s <= steps[steps.length - 1])).toBe(true);
      for (const s of await store.checkpointSteps('soak')) {
        const c = await store.loadCheckpointAt('soak', s);
        expect(c && [...c.files['w.bin']].every((b) => b === s % 256), `checkpoint ${s} intact`).toBe(true);
      }
      expect(rec.status).toBe('running');
      await store.close();

      // The next session repairs the torn tail and continues the same run.
      expect((await runWriter(dataDir, 4, null)).code).toBe(0);
      const again = await RunStore.open(dataDir);
      expect(again.warnings).toEqual([]);
      const after = (await again.readMetrics('soak')).map((m) => m.step);
      after.forEach((s, i) => expect(s).toBe(i + 1));
      expect(after.length).toBe(steps.length + 4);
      expect((await readJsonl(join(runDir, 'trajectories.jsonl'))).tornTail).toBe(false);
      expect((await again.getRun('soak'))?.status).toBe('completed');
      expect((await readdir(dataDir)).includes('runs.json.lock')).toBe(false);
      await again.close();
    }
    expect(tornSeen).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
