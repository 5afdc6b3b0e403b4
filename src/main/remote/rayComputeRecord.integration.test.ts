/**
 * Every run on Ray records the compute it was submitted with — backend, rollout engine, K — even when its job dies
 * before the trainer reports its end (the record used to take them only from the job's `done` line, so a job that
 * failed mid-run left "unknown"). On a REAL Ray head (tests/support/ray.ts: token auth, 127.0.0.1, stopped by its
 * pid): `train --on` runs whose trainer process on the node is killed with SIGKILL, once after its first metric
 * row and once before it wrote any.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../cli/types';
import train from '../cli/commands/train';
import remote from '../cli/commands/remote';
import { RunStore } from '../store/runStore';
import { RunFiles } from '../store/runFiles';
import { TINY } from '../../../tests/tinyTrainer';
import { startRayHead, type RayHead } from '../../../tests/support/ray';
import { RayClient } from './rayClient';

function ctx(dataDir: string): { ctx: CliContext; err: () => string } {
  let err = '';
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const w = new Writable({ write: (c, _e, cb) => ((err += String(c)), cb()) });
  return { ctx: { dataDir, stdout: sink, stderr: w, isTTY: false }, err: () => err };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pids of the node's trainer for a run: `node arlarena.mjs …` with ARLARENA_RUN_ID=<run> in its environment. */
function trainerPids(runId: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes('arlarena.mjs')) continue;
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(`ARLARENA_RUN_ID=${runId}`)) out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

let head: RayHead;
let dataDir: string;
let client: RayClient;

async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 240_000): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (head.status().exited) throw new Error(`the Ray head died while waiting for ${what}: ${head.status().log.slice(-1500)}`);
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
}

beforeAll(async () => {
  head = await startRayHead();
  dataDir = await mkdtemp(join(tmpdir(), 'arl-raycompute-'));
  client = new RayClient({ name: null, url: head.url, token: head.token });
  await remote.run(['add', 'head', head.url, '--token-file', head.tokenFile], ctx(dataDir).ctx);
}, 120_000);

afterAll(async () => {
  await head?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 60_000);

/**
 * Starts `train --on head` (backend left to `auto`, which Ray runs resolve to wasm; K = 1; rollouts on
 * onnxruntime), kills its trainer on
 * the node once `killWhen` holds, and answers the stored record and metric rows of the run.
 */
async function killedRun(killWhen: (runId: string) => Promise<boolean>) {
  const c = ctx(dataDir);
  // Rollouts on onnxruntime, as a run here uses by default (the tiny trainer's settings pick tfjs for speed).
  const args = Object.entries({ ...TINY, 'training.steps': 60, 'compute.workers': 1, 'compute.rolloutEngine': 'onnxruntime' }).flatMap(
    ([k, v]) => ['--set', `${k}=${v}`],
  );
  let settled = false;
  const running = train.run(['--preset', 'grpo', '--seed', '7', '--on', 'head', ...args], c.ctx).finally(() => (settled = true));
  let runId = '';
  await waitFor('the run id on stderr', () => ((runId = /run (\S+): grpo/.exec(c.err())?.[1] ?? ''), runId !== ''));
  await waitFor('the moment to kill the trainer', async () => {
    if (settled) throw new Error(`the run ended before it was killed: ${c.err()}`);
    return killWhen(runId);
  });
  const pids = trainerPids(runId);
  expect(pids).toHaveLength(1);
  process.kill(pids[0]!, 'SIGKILL');
  expect(await running).toBe(1);
  expect((await client.jobInfo(runId))?.status).toBe('FAILED');
  const store = await RunStore.open(dataDir);
  try {
    const rec = (await store.getRun(runId))!;
    const rows = await new RunFiles(store.runDir(runId)).readMetrics();
    return { rec, rows };
  } finally {
    await store.close();
  }
}

const submitted = {
  training: 'wasm',
  rollout: 'onnxruntime-cpu',
  workers: 1,
  detail: expect.stringMatching(
    /^submitted to Ray \(http:\/\/127\.0\.0\.1:\d+\) with training on wasm, rollouts on onnxruntime-cpu, K = 1/,
  ),
};

describe('a Ray run whose job dies records the compute it was submitted with', () => {
  it('killed mid-run, after its first metric rows: failed, with backend, rollout engine and K on the record', async () => {
    const { rec, rows } = await killedRun(
      async (id) => trainerPids(id).length === 1 && (await client.jobLogs(id)).includes('@arlarena:metric'),
    );
    expect(rec.status).toBe('failed');
    expect(rows.length).toBeGreaterThan(0);
    expect(rec.backend).toMatchObject(submitted);
  }, 360_000);

  it('killed before it wrote a row: failed, and the record still says what it was submitted with', async () => {
    const { rec, rows } = await killedRun(async (id) => trainerPids(id).length === 1);
    expect(rec.status).toBe('failed');
    expect(rows).toEqual([]);
    expect(rec.backend).toMatchObject(submitted);
  }, 360_000);
});
