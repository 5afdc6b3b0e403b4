/**
 * The app's remote settings, "Run on" and Cluster view API on a REAL Ray head (tests/support/ray.ts: ray[default]
 * from the peer venv, token auth on, 127.0.0.1, stopped by its pid): a pasted token reaches the cluster, a wrong
 * or missing one is named; a run started with sessions.start `on` trains as a Ray job and lands in the store; the
 * Cluster view's job list, log tail and Stop read and act on that job. No mock of the Jobs API. Kept to one head
 * and two short jobs (a head costs ~1.5 GB and 10–30 s here).
 */
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRayHead, type RayHead } from '../../../../tests/support/ray';
import { TINY } from '../../../../tests/tinyTrainer';
import { openHandlerTestLab, type HandlerTestLab } from '../../testing/testLab';
import { createRemotesHandlers } from './remotes';
import { createSessionsHandlers } from './sessions';
import { createRunsHandlers } from './runs';

let head: RayHead;
let lab: HandlerTestLab;
const call = async (m: string, input?: unknown): Promise<any> => lab.call(m, input);

async function until<T>(what: string, fn: () => Promise<T | null | undefined | false>, ms = 150_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  head = await startRayHead();
  lab = await openHandlerTestLab('arl-remotes-ray-', (s) => ({
    ...createRemotesHandlers(s),
    ...createSessionsHandlers(s),
    ...createRunsHandlers(s),
  }));
}, 120_000);

afterAll(async () => {
  await lab?.close();
  await head?.stop();
}, 60_000);

describe('remotes API on a real Ray head with token auth', () => {
  it('test reports the cluster with the pasted token; a wrong or missing token is named', async () => {
    expect((await call('remotes.add', { name: 'head', url: head.url, token: head.token })).value).toMatchObject({
      name: 'head',
      hasToken: true,
    });
    const t = await call('remotes.test', { name: 'head' });
    // Version only here: a head this fresh may not have sent its resource report yet (nodes and CPUs are checked
    // after the run below, when it has).
    expect(t.value).toMatchObject({ url: head.url, rayVersion: '2.60.0' });
    await call('remotes.add', { name: 'wrong', url: head.url, token: 'f'.repeat(64) });
    expect((await call('remotes.test', { name: 'wrong' })).error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('refused the token'),
    });
    await call('remotes.add', { name: 'bare', url: head.url });
    expect((await call('remotes.test', { name: 'bare' })).error).toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining('asks for a token'),
    });
    // A run on a cluster that refuses the token is refused before it exists.
    const before = (await call('runs.list')).value.length;
    expect((await call('sessions.start', { preset: 'grpo', env: 'sokoban', on: 'wrong' })).error).toMatchObject({
      code: 'UNAVAILABLE',
      field: 'on',
    });
    expect((await call('runs.list')).value.length).toBe(before);
    expect(JSON.stringify(await call('remotes.list'))).not.toContain(head.token);
  }, 60_000);

  it('a run started on the remote trains as a Ray job; the Cluster view lists it with its node, times and log', async () => {
    const started = await call('sessions.start', {
      preset: 'grpo',
      env: 'sokoban',
      seed: 3,
      on: 'head',
      overrides: { ...TINY, 'training.steps': 3 },
    });
    expect(started.ok).toBe(true);
    const runId: string = started.value.runId;
    const done = await until('the Ray run to end', async () => {
      const r = (await call('runs.get', { runId })).value;
      return ['completed', 'failed', 'stopped'].includes(r.status) ? r : null;
    });
    expect(done.error).toBeNull();
    expect(done.status).toBe('completed');
    expect(done.tags).toEqual(expect.arrayContaining(['on:ray', 'ray:head', `ray-url:${head.url}`]));
    const series = (await call('runs.metrics', { runIds: [runId], keys: ['episode/success_rate'] })).value;
    expect(series[0].steps).toEqual([1, 2, 3]);

    expect((await call('remotes.test', { name: 'head' })).value).toMatchObject({
      nodes: 1,
      cpus: { total: 2 },
      gpus: { total: 0, free: 0 },
    });
    const jobs = (await call('remotes.jobs', { name: 'head' })).value;
    expect(jobs.url).toBe(head.url);
    const job = jobs.jobs.find((j: any) => j.submissionId === runId);
    expect(job).toMatchObject({ kind: 'run', runId, verl: null, status: 'SUCCEEDED' });
    // The node is the one machine of this cluster: Ray names it by the address its agent listens on.
    const here = Object.values(networkInterfaces())
      .flat()
      .map((a) => a?.address);
    expect(here).toContain(job.node);
    expect(Date.parse(job.startTime)).toBeLessThanOrEqual(Date.parse(job.endTime));
    const log = (await call('remotes.jobLog', { name: 'head', submissionId: runId, lines: 5 })).value;
    expect(log.lines).toHaveLength(5);
    expect(log.totalLines).toBeGreaterThan(5);
    // Line-protocol lines longer than 200 characters (checkpoints carry base64) are shortened in the tail.
    const full = (await call('remotes.jobLog', { name: 'head', submissionId: runId, lines: 2000 })).value;
    expect(full.lines.some((l: string) => l.startsWith('@arlarena:metric '))).toBe(true);
    expect(full.lines.every((l: string) => l.length < 260)).toBe(true);
  }, 180_000);

  it('Stop from the Cluster view stops a followed run through its session: the run ends stopped, the job STOPPED', async () => {
    const started = await call('sessions.start', {
      preset: 'grpo',
      env: 'sokoban',
      seed: 4,
      on: 'head',
      overrides: { ...TINY, 'training.steps': 200 },
    });
    const runId: string = started.value.runId;
    await until('its first metric', async () => (await call('runs.get', { runId })).value.step >= 1);
    expect((await call('remotes.jobs', { name: 'head' })).value.jobs.find((j: any) => j.submissionId === runId).status).toBe('RUNNING');
    expect((await call('remotes.stopJob', { name: 'head', submissionId: runId })).value).toEqual({ stopped: true, via: 'session' });
    const r = await until('the run to stop', async () => {
      const rec = (await call('runs.get', { runId })).value;
      return ['completed', 'failed', 'stopped'].includes(rec.status) ? rec : null;
    });
    expect(r.status).toBe('stopped');
    expect(r.step).toBeLessThan(200);
    const job = await until('the job to be STOPPED', async () =>
      (await call('remotes.jobs', { name: 'head' })).value.jobs.find((j: any) => j.submissionId === runId && j.status !== 'RUNNING'),
    );
    expect(job.status).toBe('STOPPED');
    // Nothing the lab did not start can be stopped from the app.
    expect((await call('remotes.stopJob', { name: 'head', submissionId: 'not-a-job' })).error.code).toBe('NOT_FOUND');
  }, 180_000);
});
