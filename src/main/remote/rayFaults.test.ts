/**
 * Real faults on a REAL Ray head (ray[default] from the peer venv, token auth on, 127.0.0.1, one head for the file,
 * stopped by its pid at the end). Nothing here is a mock: the faults are made for real, against the real head.
 *  - The connection to the dashboard is cut mid-follow by a TCP relay between the lab and the head, dropped and
 *    restored. The follow must pick up where it stopped.
 *  - The trainer process on the node is killed with SIGKILL, its pid found by the run id in its environment. The
 *    run must be failed with the job's last log lines, and the store must stay consistent.
 *  - A job is killed in the middle of writing a protocol line (it kills itself with SIGKILL half-way through). The
 *    cut line must not be used as data.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import train from '../cli/commands/train';
import { RunStore } from '../store/runStore';
import { CHECKPOINTS_DIR, RunFiles } from '../store/runFiles';
import { TINY } from '../../../tests/tinyTrainer';
import { startTcpProxy } from '../../../tests/support/tcpProxy';
import { RayClient, type JobSubmission } from './rayClient';
import { followJobLog, newFollowStats } from './logFollow';
import { rayTrainingJob } from './rayTarget';
import type { TrainerHooks } from '../../core/training/types';
import { pidsWith, rayHeadForFile, sleep, waitOnHead } from '../testing/rayHead';
import { testCliContext } from '../testing/testContext';

const ray = rayHeadForFile('arl-rayfaults-');
const waitFor = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 120_000) => waitOnHead(ray.head, what, cond, timeoutMs);

/**
 * Submits a job. A head that has just started may not have its job agent yet and answers "No available agent to
 * submit job, please try again later": it is asked again for a while.
 */
async function submit(j: JobSubmission): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await ray.client.submitJob(j);
      return;
    } catch (e) {
      if (i > 60 || !/No available agent/.test((e as Error).message)) throw e;
      await sleep(500);
    }
  }
}

describe('a dropped connection to the dashboard', () => {
  it('the follow resumes where it stopped: the relay to the head is cut twice while the job writes, and every line of its log arrives once and in order', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(ray.head.url).port) });
    try {
      const id = `faults-drop-${Date.now()}`;
      const n = 400;
      await submit({
        submissionId: id,
        entrypoint: `sh -c 'i=0; while [ $i -lt ${n} ]; do i=$((i+1)); echo "line $i of ${n} ${'x'.repeat(60)}"; sleep 0.02; done'`,
        runtimeEnv: {},
      });
      const viaProxy = new RayClient({ name: null, url: proxy.url, token: ray.head.token });
      const got: string[] = [];
      const stats = newFollowStats();
      const follow = followJobLog(
        viaProxy,
        id,
        (l) => void got.push(l),
        async () => false,
        { stats },
      );
      const numbered = () => got.filter((l) => l.startsWith('line '));
      await waitFor('the first 60 lines', () => numbered().length >= 60);
      await proxy.drop();
      const cutAt = numbered().length;
      await sleep(1500); // the cut lasts a while, as an outage does, not for a condition
      const duringCut = numbered().length;
      await proxy.restore();
      await waitFor('60 more lines after the first cut', () => numbered().length >= cutAt + 60 || numbered().length === n);
      await proxy.drop();
      await sleep(1500);
      await proxy.restore();
      const { info } = await follow;
      expect(info.status).toBe('SUCCEEDED');
      // Nothing came while the relay was down: the lines after it came over a new connection.
      expect(duringCut).toBe(cutAt);
      expect(cutAt).toBeLessThan(n);
      expect(numbered().map((l) => Number(l.split(' ')[1]))).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      // Every line of the job's whole log (read directly from the head), once each, nothing else.
      const whole = (await ray.client.jobLogs(id)).split('\n');
      if (whole[whole.length - 1] === '') whole.pop();
      expect(got).toEqual(whole);
      expect(stats.reconnects).toBeGreaterThanOrEqual(1);
      expect(proxy.connections()).toBeGreaterThan(2);
      console.log(
        `[ray faults] follow through a relay cut twice: ${stats.reads} log reads, ${stats.reconnects} stream reopens, ${stats.fullReads} whole-log reads at the end, ${stats.received} chars received for ${stats.handled} handled`,
      );
    } finally {
      await proxy.close();
    }
  }, 180_000);
});

describe('a job killed on the cluster', () => {
  it("the trainer process killed (-9) on the node mid-run: the run is marked failed with the job's last log lines; the store holds a readable run with steps 1..k and only whole, verified checkpoints", async () => {
    const c = testCliContext(ray.dataDir);
    // compute.workers=1: the lab's Ray package has no gradient-worker entry (sessions/workerBoot.mjs), so the
    // default (one worker per core of the node) fails on the node before a step; that is not the fault tested here.
    const args = Object.entries({ ...TINY, 'training.steps': 60, 'training.checkpointEvery': 2, 'compute.workers': 1 }).flatMap(
      ([k, v]) => ['--set', `${k}=${v}`],
    );
    let settled: string | null = null;
    const running = train.run(['--preset', 'grpo', '--seed', '5', '--on', 'head', ...args], c.ctx);
    running.then(
      (code) => (settled = `exit ${code}`),
      (e: Error) => (settled = e.stack ?? e.message),
    );
    const notEnded = async () => {
      if (!settled) return;
      const st = await RunStore.open(ray.dataDir);
      const why = runId ? (await st.getRun(runId))?.error : null;
      await st.close();
      throw new Error(`the run ended before it was killed (${settled}): ${why ?? c.err()}`);
    };
    let runId = '';
    await waitFor('the run id on stderr', () => ((runId = /run (\S+): grpo/.exec(c.err())?.[1] ?? ''), runId !== ''));
    // Killed as soon as the job has written its first checkpoint line: the lab is taking it in at that moment.
    await waitFor(
      "the job's first checkpoint line",
      async () => {
        await notEnded();
        await sleep(400);
        return (await ray.client.jobInfo(runId)) !== null && (await ray.client.jobLogs(runId)).includes('@arlarena:checkpoint');
      },
      240_000,
    );
    const pids = pidsWith('arlarena.mjs', `ARLARENA_RUN_ID=${runId}`);
    expect(pids).toHaveLength(1);
    process.kill(pids[0]!, 'SIGKILL');
    expect(await running).toBe(1);
    const job = await ray.client.jobInfo(runId);
    expect(job?.status).toBe('FAILED');
    const why = /ended failed: ([\s\S]*)$/.exec(c.err())?.[1] ?? '';
    expect(why).toMatch(new RegExp(`Ray job ${runId} ended FAILED`));
    expect(why).toContain('its last log lines:');
    expect(why).toContain(`Running entrypoint for job ${runId}`);

    // The store, opened afresh: the run reads back, failed, with every step from 1 to its last once, and each
    // checkpoint whole (every file its meta names is there with the SHA-256 the node sent).
    const store = await RunStore.open(ray.dataDir);
    try {
      const rec = await store.getRun(runId);
      expect(rec?.status).toBe('failed');
      const steps = (await new RunFiles(store.runDir(runId)).readMetrics()).map((m) => m.step);
      expect(steps.length).toBeGreaterThan(0);
      expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i + 1));
      expect(rec!.step).toBe(steps[steps.length - 1]);
      const cks = await store.checkpointSteps(runId);
      expect(cks.length).toBeGreaterThan(0);
      for (const s of cks) expect(s).toBeLessThanOrEqual(steps[steps.length - 1]!);
      const ckRoot = join(store.runDir(runId), CHECKPOINTS_DIR);
      for (const d of await readdir(ckRoot)) {
        const meta = JSON.parse(await readFile(join(ckRoot, d, 'meta.json'), 'utf8')) as { sha256: Record<string, string> };
        expect(Object.keys(meta.sha256).length).toBeGreaterThan(0);
        for (const [name, sha] of Object.entries(meta.sha256)) {
          expect(
            createHash('sha256')
              .update(await readFile(join(ckRoot, d, name)))
              .digest('hex'),
            `${d}/${name}`,
          ).toBe(sha);
        }
      }
    } finally {
      await store.close();
    }
  }, 360_000);

  it('a job killed in the middle of writing a protocol line: the run fails saying the job ended while writing that line, with the steps before it handed on once and the cut line never used', async () => {
    const id = `faults-torn-${Date.now()}`;
    // The job writes a whole metric line, then half of the next one, and kills itself with SIGKILL mid-line (the
    // shell that ran it then adds "Killed" to the log). It is submitted under the run id, so the lab's Ray job
    // re-attaches to it as to its own run's job.
    await submit({
      submissionId: id,
      // printf writes \\100 as "@": the entrypoint's own text, which Ray echoes into the log, holds no protocol line.
      entrypoint: `sh -c 'echo before; printf "\\n\\100arlarena:metric {\\"step\\":1,\\"values\\":{}}\\n"; printf "\\n\\100arlarena:metric {\\"step\\":2,\\"val"; kill -9 $$'`,
      runtimeEnv: {},
    });
    const metrics: number[] = [];
    const hooks: TrainerHooks = {
      onMetrics: (r) => void metrics.push(r.step),
      onTrajectory: () => undefined,
      onCheckpoint: async () => undefined,
      onStatus: () => undefined,
      checkControl: async () => 'continue',
    };
    const err = await rayTrainingJob(ray.client)
      .run({ runId: id, config: {}, seed: 0, dataDir: ray.dataDir }, hooks)
      .then(
        () => null,
        (e: Error) => e,
      );
    expect((await ray.client.jobInfo(id))?.status).toBe('FAILED');
    expect(err?.message).toMatch(
      new RegExp(`Ray job ${id} ended FAILED while writing a metric line \\(cut off after \\d+ characters, not used\\)`),
    );
    expect(err?.message).toContain('its last log lines:');
    expect(err?.message).toContain('before');
    expect(metrics).toEqual([1]);
  }, 120_000);
});
