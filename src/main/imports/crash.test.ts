/**
 * kill -9 of `arlarena import` in the middle of a large log: an import is built aside (<dataDir>/.imports/) and
 * joins the catalog only when complete, so the kill leaves no run at all (before: an `interrupted` half run that
 * resume refused and that had to be deleted by hand); the next import clears what the killed one left and imports
 * the log whole.
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

async function firstRunDir(runsDir: string): Promise<string | null> {
  const names = (await readdir(runsDir).catch(() => [] as string[])).filter((n) => !n.startsWith('.'));
  return names[0] ? join(runsDir, names[0]) : null;
}

/** The run the import is building aside, once it exists. */
async function stagedRunDir(data: string): Promise<string | null> {
  for (const s of await readdir(join(data, '.imports')).catch(() => [] as string[])) {
    const d = await firstRunDir(join(data, '.imports', s, 'runs'));
    if (d) return d;
  }
  return null;
}

it('a killed import leaves no run (it was being built aside), and the log imports again whole', async () => {
  const log = join(dir, 'big.log');
  await bigVerlLog(log, 10_000);
  const data = join(dir, 'data');
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), 'import', log, '--json', '--data-dir', data], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  // Kill as soon as the run exists and has some metrics on disk: mid-import.
  const t0 = Date.now();
  for (;;) {
    const d = await stagedRunDir(data);
    const size = d
      ? await stat(join(d, 'metrics.jsonl')).then(
          (s) => s.size,
          () => 0,
        )
      : 0;
    if (size > 0) break;
    if (Date.now() - t0 > 50_000) throw new Error('the import never started writing');
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  const how = await exited;
  expect(how.signal).toBe('SIGKILL');

  const store = await RunStore.open(data);
  try {
    expect(await store.listRuns()).toEqual([]);
    expect(await firstRunDir(join(data, 'runs'))).toBeNull();
    expect(await store.markInterrupted()).toEqual([]);
    expect((await readdir(join(data, '.imports'))).length).toBe(1);
    const again = await importLogs(store, [log]);
    expect(again.duplicateOf).toBeUndefined();
    expect(again.steps).toBe(10_000);
    expect((await store.listRuns()).map((r) => r.status)).toEqual(['completed']);
    // The killed import's folder is gone (its process is dead); this import's own too.
    expect(await readdir(join(data, '.imports'))).toEqual([]);
  } finally {
    await store.close();
  }
});
