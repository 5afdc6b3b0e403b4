import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../store/runStore';
import { SessionManager, type EmitFn } from './sessionManager';
import type { ApiEventName } from '../../shared/api';
import { syntheticJobs } from '../testing/jobs/index';

let dir: string;
let store: RunStore;
let events: Array<{ event: ApiEventName; payload: any; t: number }>;
let mgr: SessionManager;
const emit: EmitFn = (event, payload) => {
  events.push({ event, payload, t: Date.now() });
};

function make(opts: { concurrency?: number } = {}): SessionManager {
  return new SessionManager({ store, emit, ...syntheticJobs(), concurrency: opts.concurrency ?? 1, flushMs: 50, throttleMs: 250 });
}

async function until(cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > timeoutMs) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const runInput = (config: Record<string, unknown>, seed = 1) => ({
  preset: 'test',
  env: 'sokoban',
  seed,
  config,
  totalSteps: Number(config.steps),
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-sess-'));
  store = await RunStore.open(dir);
  events = [];
});
afterEach(async () => {
  await mgr?.dispose();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('SessionManager (worker_threads)', () => {
  it('runs a job in a worker: metrics persisted, live alerts stored, events throttled', async () => {
    mgr = make();
    const { runId } = await mgr.startNew(runInput({ steps: 120, shape: 'cispo_collapse', stepMs: 2, checkpointEvery: 50 }));
    expect(await mgr.waitFor(runId)).toBe('completed');
    const rec = (await store.getRun(runId))!;
    expect(rec.status).toBe('completed');
    expect(rec.step).toBe(120);
    // The job's live detector read every step it stored.
    expect(rec.detectedThrough).toBe(120);
    expect(rec.backend.training).toBe('synthetic');
    const rows = await store.readMetrics(runId);
    expect(rows.map((r) => r.step)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(rec.alerts.some((a) => a.rule === 'grad_norm_spike')).toBe(true);
    expect((await store.trajectories(runId)).steps).toHaveLength(120);
    // Every record reached subscribers, in ≤ 4 batches per second.
    const batches = events.filter((e) => e.event === 'run.metrics');
    expect(batches.flatMap((b) => b.payload.records.map((r: any) => r.step))).toEqual(rows.map((r) => r.step));
    const span = (batches.at(-1)!.t - batches[0].t) / 1000;
    expect(batches.length).toBeLessThanOrEqual(Math.ceil(span * 4) + 2);
    expect(events.some((e) => e.event === 'run.alert')).toBe(true);
    const statuses = events.filter((e) => e.event === 'session.status').map((e) => e.payload.status);
    expect(statuses[0]).toBe('queued');
    expect(statuses).toContain('running');
    expect(statuses.at(-1)).toBe('completed');
  });

  it('an alert acknowledged while the run goes on stays acknowledged in later live events', async () => {
    mgr = make();
    const { runId } = await mgr.startNew(runInput({ steps: 200, shape: 'cispo_collapse', stepMs: 15 }));
    await until(async () => events.some((e) => e.event === 'run.alert'));
    const first = events.find((e) => e.event === 'run.alert')!.payload.alert;
    await store.updateRun(runId, (r) => ({ alerts: r.alerts.map((a) => (a.id === first.id ? { ...a, acknowledged: true } : a)) }));
    const ackedAt = events.length;
    expect(await mgr.waitFor(runId)).toBe('completed');
    const later = events.slice(ackedAt).filter((e) => e.event === 'run.alert' && e.payload.alert.id === first.id);
    // The detector kept extending the same alert after the acknowledgement; none of its updates may undo it.
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((e) => e.payload.alert.acknowledged)).toBe(true);
  });

  it('reports behaviour-cloning progress as the session phase, apart from RL steps', async () => {
    mgr = make();
    const { runId } = await mgr.startNew(runInput({ steps: 3, bcUpdates: 40, stepMs: 20 }));
    expect(await mgr.waitFor(runId)).toBe('completed');
    const status = events.filter((e) => e.event === 'session.status' && e.payload.runId === runId).map((e) => e.payload);
    const bc = status.filter((p) => p.phase === 'warmstart');
    expect(bc.length).toBeGreaterThan(0);
    expect(bc.every((p) => p.step === 0)).toBe(true);
    expect(bc.at(-1).detail).toMatch(/^behaviour cloning: update \d+ \/ 40 \(BC loss /);
    expect(status.at(-1)).toMatchObject({ status: 'completed', phase: 'done', step: 3 });
  });

  it('queues beyond the concurrency limit; pause, resume and stop', async () => {
    mgr = make({ concurrency: 1 });
    const a = await mgr.startNew(runInput({ steps: 400, stepMs: 10 }));
    const b = await mgr.startNew(runInput({ steps: 5 }, 2));
    expect(b.status).toBe('queued');
    expect(mgr.list().find((s) => s.runId === b.runId)?.queuePosition).toBe(1);
    await until(async () => (await store.readMetrics(a.runId)).length >= 5);
    await mgr.pause(a.runId);
    // The worker acknowledges at its next control check; from then on nothing is written.
    let prev = -1;
    await until(async () => {
      await new Promise((r) => setTimeout(r, 250));
      const n = (await store.readMetrics(a.runId)).length;
      const settled = n === prev;
      prev = n;
      return settled;
    });
    const s1 = prev;
    await new Promise((r) => setTimeout(r, 600));
    expect((await store.readMetrics(a.runId)).length).toBe(s1);
    expect((await store.getRun(a.runId))!.status).toBe('paused');
    await mgr.resume(a.runId);
    await until(async () => (await store.readMetrics(a.runId)).length > s1);
    await mgr.stop(a.runId);
    expect(await mgr.waitFor(a.runId)).toBe('stopped');
    expect(await mgr.waitFor(b.runId)).toBe('completed');
    expect((await store.loadLatestCheckpoint(a.runId))?.step).toBe((await store.getRun(a.runId))!.step);
  });

  it('stop inside a step whose work blocks the worker thread: the step is dropped, resume continues', async () => {
    mgr = make();
    // Each step blocks its thread 3 s in 30 pieces (as tfjs' synchronous passes do); the stop is asked for early
    // in step 2. Finishing the step would store step 2; dropping it ends at step 1 within about one piece.
    const { runId } = await mgr.startNew(runInput({ steps: 2, busyMs: 3000, busyChunks: 30, checkpointEvery: 1 }));
    await until(async () => (await store.readMetrics(runId)).length >= 1, 60_000);
    const t0 = Date.now();
    await mgr.stop(runId);
    expect(await mgr.waitFor(runId)).toBe('stopped');
    const tookMs = Date.now() - t0;
    const rec = (await store.getRun(runId))!;
    expect(rec.step).toBe(1);
    expect((await store.readMetrics(runId)).map((r) => r.step)).toEqual([1]);
    expect((await store.loadLatestCheckpoint(runId))?.step).toBe(1);
    // Generous for a loaded machine, and still well under the 3 s the rest of the step would take.
    expect(tookMs).toBeLessThan(2500);
    await mgr.resume(runId);
    expect(await mgr.waitFor(runId)).toBe('completed');
    expect((await store.readMetrics(runId)).map((r) => r.step)).toEqual([1, 2]);
  }, 90_000);

  it.each(['throw', 'exit'] as const)('a crashed worker (%s) marks the run failed and keeps its flushed data', async (crashKind) => {
    mgr = make();
    const { runId } = await mgr.startNew(runInput({ steps: 100, stepMs: 5, crashAtStep: 40, crashKind }));
    expect(await mgr.waitFor(runId)).toBe('failed');
    const rec = (await store.getRun(runId))!;
    expect(rec.error).toMatch(crashKind === 'throw' ? /crashed: synthetic crash at step 40/ : /crashed: worker exited with code 3/);
    const steps = (await store.readMetrics(runId)).map((r) => r.step);
    // Everything up to the worker's last reported flush is on disk (and usually more), contiguous from step 1.
    const flushed = Number(/kept up to step (\d+)/.exec(rec.error!)![1]);
    expect(flushed).toBeGreaterThan(0);
    expect(steps.length).toBeGreaterThanOrEqual(flushed);
    expect(steps.length).toBeLessThan(40);
    expect(steps).toEqual(Array.from({ length: steps.length }, (_, i) => i + 1));
    const err = events.find((e) => e.event === 'session.status' && e.payload.status === 'failed');
    expect(err?.payload.error).toMatch(/crashed/);
  });

  it("a Hugging Face run's model is on its record from the start: a run that crashes before its end still names it", async () => {
    mgr = make();
    const model = {
      path: '/models/tiny-qwen3',
      architecture: 'Qwen3ForCausalLM',
      config: { model_type: 'qwen3', max_position_embeddings: 512 },
      weights: { 'model.safetensors': 'a'.repeat(64) },
      tokenizer: { 'tokenizer.json': 'b'.repeat(64) },
      params: 1000,
      trainableParams: 40,
      lora: { rank: 4, alpha: 8, dropout: 0, targets: ['q_proj'] },
    };
    const { runId } = await mgr.startNew(runInput({ steps: 100, stepMs: 5, crashAtStep: 3, crashKind: 'exit', reportModel: model }));
    expect(await mgr.waitFor(runId)).toBe('failed');
    expect((await store.getRun(runId))!.model).toEqual(model);
  });

  it('runs left running at start-up are interrupted and resume from their last checkpoint', async () => {
    mgr = make();
    const { runId } = await mgr.startNew(runInput({ steps: 60, stepMs: 5, crashAtStep: 45, crashKind: 'exit', checkpointEvery: 20 }));
    await mgr.waitFor(runId);
    // Simulate the app dying mid-run: the record says running.
    await store.updateRun(runId, { status: 'running', error: null });
    await mgr.dispose();
    const store2 = await RunStore.open(dir);
    const mgr2 = new SessionManager({ store: store2, emit, ...syntheticJobs(), concurrency: 1, flushMs: 50 });
    expect(await mgr2.recover()).toEqual([runId]);
    expect((await store2.getRun(runId))!.status).toBe('interrupted');
    await store2.updateRun(runId, { config: { steps: 60, stepMs: 1, checkpointEvery: 20 } });
    await mgr2.resume(runId);
    expect(await mgr2.waitFor(runId)).toBe('completed');
    const steps = (await store2.readMetrics(runId)).map((r) => r.step);
    expect(steps).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect((await store2.getRun(runId))!.detectedThrough).toBe(60);
    await mgr2.dispose();
    await store2.close();
  });

  it('refuses to resume a completed run and to pause an unknown one', async () => {
    mgr = make();
    const { runId } = await mgr.startNew(runInput({ steps: 3 }));
    await mgr.waitFor(runId);
    await expect(mgr.resume(runId)).rejects.toThrow(/completed/);
    await expect(mgr.pause('nope')).rejects.toThrow(/no active session/);
  });
});
