/**
 * kill -9 of `arlarena import` in the middle of a large log: the half-imported run must never look complete,
 * and the same log imports again afterwards (the half run holds no SHA-256, so it is no duplicate).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RunStore } from '../store/runStore';
import { importLogs } from './importLogs';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-import-kill-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bigVerlLog(path: string, steps: number): Promise<void> {
  const out = createWriteStream(path);
  const keys = Array.from({ length: 40 }, (_, k) => `timing_s/part_${k}`);
  for (let i = 0; i < steps; i++) {
    const line = `step:${i} - actor/grad_norm:${(1 + (i % 5) * 0.1).toFixed(2)} - actor/entropy:0.4 - ${keys.map((k) => `${k}:${(i % 97) / 10}`).join(' - ')}\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r, j) => out.end((e?: Error | null) => (e ? j(e) : r())));
}

async function firstRunDir(data: string): Promise<string | null> {
  const names = (await readdir(join(data, 'runs')).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
  return names[0] ? join(data, 'runs', names[0]) : null;
}

it('a killed import leaves its run interrupted (never completed), and the log imports again', async () => {
  const log = join(dir, 'big.log');
  await bigVerlLog(log, 10_000);
  const data = join(dir, 'data');
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), 'import', log, '--json', '--data-dir', data], { cwd: ROOT, stdio: 'ignore' });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  // Kill as soon as the run exists and has some metrics on disk: mid-import.
  const t0 = Date.now();
  for (;;) {
    const d = await firstRunDir(data);
    const size = d ? await stat(join(d, 'metrics.jsonl')).then((s) => s.size, () => 0) : 0;
    if (size > 0) break;
    if (Date.now() - t0 > 50_000) throw new Error('the import never started writing');
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  const how = await exited;
  expect(how.signal).toBe('SIGKILL');

  const store = await RunStore.open(data);
  try {
    const [half] = await store.listRuns();
    expect(half.kind).toBe('imported');
    expect(half.status).not.toBe('completed');
    expect(await store.markInterrupted()).toEqual([half.id]);
    const rec = (await store.getRun(half.id))!;
    expect(rec.status).toBe('interrupted');
    expect(rec.source!.sha256).toEqual([]);
    expect(rec.source!.notes.join(' ')).toMatch(/importing: not complete/);
    expect(rec.error).toMatch(/stopped while this run was being imported or followed/);
    const again = await importLogs(store, [log]);
    expect(again.duplicateOf).toBeUndefined();
    expect(again.steps).toBe(10_000);
  } finally {
    await store.close();
  }
});
