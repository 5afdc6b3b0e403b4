/**
 * Oversized inputs through `arlarena import`, each in its own process whose peak RSS (VmHWM) is measured
 * (hardening round three: a 240 MB trainer_state.json aborted out of memory at 6 GB; a 1.5 GB sparse file starting
 * with PK\x03\x04 peaked at 3.18 GB; one JSONL line of 800k keys (12.7 MB) at 6.06 GB). Now each ends within a few
 * times its size: the trainer state past 16 MiB is not held (a clear note), a "bundle" past 512 MiB is refused
 * before a byte is read, the line past 10,000 values is skipped and counted, and so are a TensorBoard run's tags
 * past its first 10,000 (100k tags in 4.5 MB peaked at 895 MB). The bounds leave room for the
 * CLI's own ~200 MB (tsx, tfjs not loaded); the measured peaks are printed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { frameRecord } from '../../core/formats/export/tensorboard';
import { EventType } from '../../core/formats/tensorboardProto';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-oversized-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Run the CLI; its peak resident set (MB) read from /proc while it runs. */
async function cliPeak(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; peakMb: number; seconds: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', join(dir, 'data'), ...args], { cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  let peakKb = 0;
  const poll = setInterval(() => {
    readFile(`/proc/${child.pid}/status`, 'utf8').then(
      (s) => {
        const m = /VmHWM:\s+(\d+) kB/.exec(s);
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      },
      () => undefined,
    );
  }, 20);
  const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  clearInterval(poll);
  return { code, stdout, stderr, peakMb: peakKb / 1024, seconds: (Date.now() - t0) / 1000 };
}

it('a 58 MB trainer_state.json: not held whole, a note says why; bounded memory', async () => {
  const p = join(dir, 'trainer_state.json');
  const out = createWriteStream(p);
  out.write('{"best_metric": null, "log_history": [\n');
  for (let i = 1; i <= 1_000_000; i++) {
    if (!out.write(`  {"step": ${i}, "loss": 0.${i % 1000}, "learning_rate": 1e-5}${i < 1_000_000 ? ',' : ''}\n`))
      await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end('], "max_steps": 1000000}\n', () => r()));
  const r = await cliPeak(['import', p]);
  console.log(
    `trainer_state.json ${(
      (await open(p, 'r').then(async (f) => {
        const s = (await f.stat()).size;
        await f.close();
        return s;
      })) / 1e6
    ).toFixed(0)} MB: exit ${r.code}, peak ${r.peakMb.toFixed(0)} MB, ${r.seconds.toFixed(1)} s`,
  );
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('trainer_state.json too large to hold');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.peakMb).toBeLessThan(600);
}, 120_000);

it('a 1.5 GB sparse file starting with PK\\x03\\x04: refused before it is read', async () => {
  const p = join(dir, 'huge.zip');
  await writeFile(p, Buffer.from([0x50, 0x4b, 0x03, 0x04]));
  const fh = await open(p, 'r+');
  await fh.truncate(1.5 * 1024 * 1024 * 1024);
  await fh.close();
  const r = await cliPeak(['import', p]);
  console.log(`1.5 GB sparse "bundle": exit ${r.code}, peak ${r.peakMb.toFixed(0)} MB, ${r.seconds.toFixed(1)} s`);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('is 1536 MiB: a bundle over 512 MiB is not read');
  expect(r.peakMb).toBeLessThan(400);
}, 120_000);

it('one JSONL line of 800k keys (12.7 MB): skipped and counted, the other lines imported; bounded memory', async () => {
  const p = join(dir, 'wide.jsonl');
  const keys: string[] = [];
  for (let i = 0; i < 800_000; i++) keys.push(`"k${i}":${i % 10}`);
  await writeFile(p, `{"step":1,"loss":0.5}\n{"step":2,${keys.join(',')}}\n{"step":3,"loss":0.25}\n`);
  const r = await cliPeak(['import', p, '--json']);
  console.log(`800k-key JSONL line: exit ${r.code}, peak ${r.peakMb.toFixed(0)} MB, ${r.seconds.toFixed(1)} s`);
  expect(r.code).toBe(0);
  const res = JSON.parse(r.stdout.trim().split('\n').pop()!);
  expect(res.steps).toBe(2);
  expect(res.skipped).toEqual({ 'record with more than 10000 values': 1 });
  expect(r.peakMb).toBeLessThan(800);
}, 120_000);

it('a TensorBoard file of 100k tags (5.6 MB): tags past 10,000 left out and counted; bounded memory', async () => {
  const p = join(dir, 'tb', 'events.out.tfevents.1700000000.host');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(dir, 'tb'));
  const parts: Uint8Array[] = [frameRecord(EventType.encode(EventType.create({ wallTime: 1, fileVersion: 'brain.Event:2' })).finish())];
  for (let i = 0; i < 100_000; i++)
    parts.push(
      frameRecord(
        EventType.encode(
          EventType.create({ wallTime: 2, step: 1, summary: { value: [{ tag: `train/metric_${i}`, simpleValue: i }] } }),
        ).finish(),
      ),
    );
  await writeFile(p, Buffer.concat(parts));
  const r = await cliPeak(['import', join(dir, 'tb'), '--json']);
  console.log(
    `TensorBoard file of 100k tags (${(Buffer.concat(parts).length / 1e6).toFixed(1)} MB): exit ${r.code}, peak ${r.peakMb.toFixed(0)} MB, ${r.seconds.toFixed(1)} s`,
  );
  expect(r.code).toBe(0);
  const res = JSON.parse(r.stdout.trim().split('\n').pop()!);
  expect(res.skipped).toEqual({ 'value of a tag past the first 10000 tags': 90_000 });
  expect(r.peakMb).toBeLessThan(500);
}, 120_000);

it('show, check and export on a run of 2M metric records stream it: bounded memory; the bundle imports back', async () => {
  const { RunStore } = await import('../store/runStore');
  const { METRICS_FILE } = await import('../store/runFiles');
  const store = await RunStore.open(join(dir, 'data'));
  const run = await store.createRun({ preset: 'test', env: 'sokoban', seed: 1, totalSteps: 2_000_000, config: {}, name: 'big run' });
  await store.close();
  const out = createWriteStream(join(dir, 'data', 'runs', run.id, METRICS_FILE));
  for (let i = 1; i <= 2_000_000; i++) {
    if (!out.write(`{"step":${i},"values":{"actor/entropy":0.${i % 1000},"critic/score/mean":0.5,"actor/grad_norm":1.25}}\n`))
      await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  const r = await cliPeak(['show', run.id]);
  console.log(`show on 2M metric records: exit ${r.code}, peak ${r.peakMb.toFixed(0)} MB, ${r.seconds.toFixed(1)} s`);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('2000000 metric records');
  expect(r.stdout).toMatch(/latest metrics \(step 2000000\)/);
  expect(r.peakMb).toBeLessThan(400);
  const c = await cliPeak(['check', run.id, '--json']);
  console.log(`check on 2M metric records: exit ${c.code}, peak ${c.peakMb.toFixed(0)} MB, ${c.seconds.toFixed(1)} s`);
  expect([0, 3]).toContain(c.code);
  expect(JSON.parse(c.stdout.trim().split('\n').pop()!).steps).toBe(2_000_000);
  expect(c.peakMb).toBeLessThan(400);
  const bundle = join(dir, 'big.arlarena.zip');
  const e = await cliPeak(['export', run.id, '--out', bundle]);
  console.log(`export of 2M metric records: exit ${e.code}, peak ${e.peakMb.toFixed(0)} MB, ${e.seconds.toFixed(1)} s`);
  expect(e.code).toBe(0);
  expect(e.peakMb).toBeLessThan(400);
  // The streamed bundle reads back whole, elsewhere.
  const other = spawnSync(
    process.execPath,
    [join(ROOT, 'bin', 'arlarena.mjs'), '--data-dir', join(dir, 'other'), 'import', bundle, '--json'],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  expect(other.status).toBe(0);
  expect(JSON.parse(other.stdout.trim().split('\n').pop()!)).toMatchObject({ format: 'bundle', steps: 2_000_000 });
}, 300_000);
