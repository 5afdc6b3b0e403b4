/**
 * Ray benchmark: what running on a Ray cluster costs against this machine, on a real local Ray head
 * (tests/support/ray.ts: ray[default] from .peers-venv, token auth on, stopped by its pid at the end).
 *
 *   npm run bench:ray                          table
 *   npm run bench:ray -- --json                one JSON object per line
 *   npm run bench:ray -- --runs 3 --sweep 8 --steps 5
 *
 * Rows:
 *   head        `ray start --head` until the dashboard takes job submissions; the head's RSS
 *   package     building the working_dir zip (esbuild bundle + wasm + warm starts) and uploading it once
 *   run         one tiny run (tests/tinyTrainer.ts config, --steps RL steps) trained on Ray and here, --runs times
 *               each: submit → first metric in the local store, submit → end; overhead = Ray / local − 1
 *   sweep       --sweep such runs through one session manager: on Ray with as many at once as the cluster has
 *               free CPUs, and on the local queue with its default concurrency (half the cores)
 * Goals: first metric within 5 s of submission on a warm cluster, < 10 % overhead per run, the sweep no
 * slower than the local queue. The load average is printed: on a shared machine the wall clock measures the queue
 * for a core as much as either path.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, usageError } from './args';
import { startRayHead, treeRssMb } from '../tests/support/ray';
import { tinyConfig } from '../tests/tinyTrainer';
import { RunStore } from '../src/main/store/runStore';
import { SessionManager, defaultConcurrency } from '../src/main/sessions/sessionManager';
import { RayClient } from '../src/main/remote/rayClient';
import { raySpawner } from '../src/main/remote/rayTarget';
import { buildLabPackage, ensureLabPackage } from '../src/main/remote/labPackage';
import type { SpawnWorker } from '../src/main/sessions/workerHost';

const USAGE = `Usage: npm run bench:ray -- [--json] [--runs N] [--sweep N] [--steps N]
  Starts a real Ray head on 127.0.0.1 (token auth on), then times tiny lab runs on it against the same runs here.
  --json      one JSON object per line
  --runs N    single runs per side (default 3)
  --sweep N   runs in the sweep (default 8; 0 skips it)
  --steps N   RL steps per run (default 5)
  --help      this text`;

const opts = benchArgs('ray', USAGE, {
  json: { type: 'boolean', default: false },
  runs: { type: 'string', default: '3' },
  sweep: { type: 'string', default: '8' },
  steps: { type: 'string', default: '5' },
});
const int = (k: string, v: string, min: number) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) usageError('ray', USAGE, `--${k} ${v}: expected an integer ≥ ${min}`);
  return n;
};
const RUNS = int('runs', opts.runs!, 1);
const SWEEP = int('sweep', opts.sweep!, 0);
const STEPS = int('steps', opts.steps!, 1);

const rows: Array<Record<string, unknown>> = [];
function row(r: Record<string, unknown>): void {
  rows.push(r);
  if (opts.json) process.stdout.write(`${JSON.stringify({ ...r, load: Number(loadavg()[0].toFixed(2)) })}\n`);
}

/** Runs `n` tiny runs through one session manager; per run: submit → first metric, submit → end (ms). */
async function runBatch(
  dataDir: string,
  n: number,
  concurrency: number,
  spawn?: SpawnWorker,
): Promise<{ wallMs: number; first: number[]; total: number[] }> {
  const store = await RunStore.open(dataDir);
  const firstAt = new Map<string, number>();
  const sessions = new SessionManager({
    store,
    concurrency,
    ...(spawn ? { spawn } : {}),
    emit: (event, payload) => {
      const id = (payload as { runId?: string }).runId;
      if (event === 'run.metrics' && id && !firstAt.has(id)) firstAt.set(id, performance.now());
    },
  });
  const t0 = performance.now();
  try {
    const started = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const config = tinyConfig('grpo', { 'training.steps': STEPS, seed: 100 + i });
        const at = performance.now();
        const info = await sessions.startNew({
          preset: 'grpo',
          env: 'sokoban',
          seed: 100 + i,
          config: config as unknown as Record<string, unknown>,
          totalSteps: STEPS,
          appVersion: 'bench',
          appCommit: 'bench',
        });
        return { id: info.runId, at };
      }),
    );
    const ends = await Promise.all(
      started.map(async (s) =>
        (await sessions.waitFor(s.id)) === 'completed' ? performance.now() : Promise.reject(new Error(`run ${s.id} did not complete`)),
      ),
    );
    return {
      wallMs: performance.now() - t0,
      first: started.map((s) => (firstAt.get(s.id) ?? NaN) - s.at),
      total: started.map((s, i) => ends[i]! - s.at),
    };
  } finally {
    await sessions.dispose();
    await store.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = await mkdtemp(join(tmpdir(), 'arl-bench-ray-'));
const head = await startRayHead();
try {
  row({ row: 'head', start_ms: head.startMs, rss_mb: Math.round(await treeRssMb(head.pid)) });
  const client = new RayClient({ name: null, url: head.url, token: head.token });
  const b0 = performance.now();
  const built = await buildLabPackage(await mkdtemp(join(tmpdir(), 'arl-bench-pkg-')));
  const buildMs = performance.now() - b0;
  const u0 = performance.now();
  const pkg = await ensureLabPackage(client);
  row({
    row: 'package',
    build_ms: Math.round(buildMs),
    upload_ms: Math.round(performance.now() - u0),
    mb: Number((built.zip.byteLength / 1e6).toFixed(2)),
    files: built.files,
    uploaded: pkg.uploaded,
  });
  // One warm-up run on each side (the head's first job starts its worker pool; the local side loads tfjs once).
  await runBatch(join(dir, 'warm-ray'), 1, 1, raySpawner(client));
  await runBatch(join(dir, 'warm-local'), 1, 1);
  const ray = { first: [] as number[], total: [] as number[] };
  const local = { first: [] as number[], total: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    const r = await runBatch(join(dir, `ray-${i}`), 1, 1, raySpawner(client));
    ray.first.push(r.first[0]!);
    ray.total.push(r.total[0]!);
    const l = await runBatch(join(dir, `local-${i}`), 1, 1);
    local.first.push(l.first[0]!);
    local.total.push(l.total[0]!);
  }
  row({
    row: 'run',
    where: 'ray',
    runs: RUNS,
    steps: STEPS,
    first_metric_ms: Math.round(median(ray.first)),
    total_ms: Math.round(median(ray.total)),
  });
  row({
    row: 'run',
    where: 'local',
    runs: RUNS,
    steps: STEPS,
    first_metric_ms: Math.round(median(local.first)),
    total_ms: Math.round(median(local.total)),
  });
  row({
    row: 'run',
    where: 'overhead',
    overhead_pct: Number(((median(ray.total) / median(local.total) - 1) * 100).toFixed(1)),
    goal: '< 10 %',
  });
  if (SWEEP > 0) {
    const free = Math.max(1, (await client.summary()).cpus.free);
    const rs = await runBatch(join(dir, 'sweep-ray'), SWEEP, free, raySpawner(client));
    const ls = await runBatch(join(dir, 'sweep-local'), SWEEP, defaultConcurrency());
    row({ row: 'sweep', where: 'ray', runs: SWEEP, at_once: free, wall_ms: Math.round(rs.wallMs) });
    row({ row: 'sweep', where: 'local', runs: SWEEP, at_once: defaultConcurrency(), wall_ms: Math.round(ls.wallMs) });
  }
} finally {
  await head.stop();
  await rm(dir, { recursive: true, force: true });
}

if (!opts.json) {
  const fmt = (r: Record<string, unknown>) =>
    Object.entries(r)
      .filter(([k]) => k !== 'row')
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  process.stdout.write(`bench:ray (load ${loadavg()[0].toFixed(1)})\n`);
  for (const r of rows) process.stdout.write(`  ${String(r.row).padEnd(8)} ${fmt(r)}\n`);
  process.stdout.write('  goals: first metric ≤ 5 s on a warm cluster, < 10 % overhead per run, sweep no slower than the local queue\n');
}
