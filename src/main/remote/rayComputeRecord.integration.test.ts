/**
 * Every run on Ray records the compute it was submitted with — backend, rollout engine, K — even when its job dies
 * before the trainer reports its end (the record used to take them only from the job's `done` line, so a job that
 * failed mid-run left "unknown"). On a REAL Ray head (testing/rayHead.ts over tests/support/ray.ts: token auth,
 * 127.0.0.1, stopped by its pid): `train --on` runs whose trainer process on the node is killed with SIGKILL, once
 * after its first metric row and once before it wrote any.
 */
import { describe, expect, it } from 'vitest';
import train from '../cli/commands/train';
import { RunStore } from '../store/runStore';
import { RunFiles } from '../store/runFiles';
import { TINY } from '../../../tests/tinyTrainer';
import { pidsWith, rayHeadForFile, waitOnHead } from '../testing/rayHead';
import { testCliContext } from '../testing/testContext';

const ray = rayHeadForFile('arl-raycompute-');
const waitFor = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 240_000) => waitOnHead(ray.head, what, cond, timeoutMs);
/** The pids of the node's trainer for a run: `node arlarena.mjs …` with ARLARENA_RUN_ID=<run> in its environment. */
const trainerPids = (runId: string) => pidsWith('arlarena.mjs', `ARLARENA_RUN_ID=${runId}`);

/**
 * Starts `train --on head` (backend left to `auto`, which Ray runs resolve to wasm; K = 1; rollouts on
 * onnxruntime), kills its trainer on
 * the node once `killWhen` holds, and answers the stored record and metric rows of the run.
 */
async function killedRun(killWhen: (runId: string) => Promise<boolean>) {
  const c = testCliContext(ray.dataDir);
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
  expect((await ray.client.jobInfo(runId))?.status).toBe('FAILED');
  const store = await RunStore.open(ray.dataDir);
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
      async (id) => trainerPids(id).length === 1 && (await ray.client.jobLogs(id)).includes('@arlarena:metric'),
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
