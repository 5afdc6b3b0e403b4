/**
 * What the live run view reads from a session: the running seconds (the view said "0 s elapsed" for
 * the whole run), frozen while paused; "stopping…" reported the moment Stop is asked for; the kind of each
 * non-finite value in run.metrics (null alone cannot tell NaN from Infinity).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../store/runStore';
import { SessionManager, type EmitFn } from './sessionManager';
import type { ApiEventName, ApiEventPayload } from '../../shared/api';
import { syntheticJobs } from '../testing/jobs/index';

let dir: string;
let store: RunStore;
let events: Array<{ event: ApiEventName; payload: unknown; t: number }>;
let mgr: SessionManager | undefined;
const emit: EmitFn = (event, payload) => {
  events.push({ event, payload, t: Date.now() });
};
const statuses = () => events.filter((e) => e.event === 'session.status').map((e) => e.payload as ApiEventPayload<'session.status'>);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not reached in ${timeoutMs} ms`);
    await sleep(25);
  }
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-live-'));
  store = await RunStore.open(dir);
  events = [];
});
afterEach(async () => {
  await mgr?.dispose();
  mgr = undefined;
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('live session status', () => {
  it('reports running seconds that grow while running and stand still while paused', async () => {
    // The manager's clock is the test's: with the real one, "the resume call itself takes a few ms" was a timed
    // bound (resumed < paused + 0.25 s) that a loaded machine overran (1.334 vs 1.32). Each check is now exact.
    let clockMs = 1_000_000;
    const now = () => clockMs;
    mgr = new SessionManager({ store, emit, ...syntheticJobs(), concurrency: 1, flushMs: 50, throttleMs: 100, now });
    const { runId } = await mgr.startNew({ preset: 'test', env: 'sokoban', seed: 1, config: { steps: 400, stepMs: 20 }, totalSteps: 400 });
    const status = () => mgr!.list().find((s) => s.runId === runId)!;
    await until('running', () => status()?.status === 'running');
    expect(status().elapsedSeconds).toBe(0);
    clockMs += 600;
    expect(status().elapsedSeconds).toBeCloseTo(0.6, 9);
    clockMs += 400;
    expect(status().elapsedSeconds).toBeCloseTo(1, 9);
    // The status events carry it too.
    await until('a status event with elapsed time', () => statuses().some((s) => Math.abs(s.elapsedSeconds - 1) < 1e-9));

    const paused = await mgr.pause(runId);
    expect(paused.status).toBe('paused');
    expect(paused.elapsedSeconds).toBeCloseTo(1, 9);
    clockMs += 500;
    expect(status().elapsedSeconds).toBeCloseTo(1, 9);
    // Counting again from where it stood, not from the pause's start.
    const resumed = await mgr.resume(runId);
    expect(resumed.elapsedSeconds).toBeCloseTo(1, 9);
    await until('running again', () => status().status === 'running');
    expect(status().elapsedSeconds).toBeCloseTo(1, 9);
    clockMs += 300;
    expect(status().elapsedSeconds).toBeCloseTo(1.3, 9);
  });

  it('says "stopping…" at once when Stop is asked for, then stops', async () => {
    mgr = new SessionManager({ store, emit, ...syntheticJobs(), concurrency: 1, flushMs: 50, throttleMs: 100 });
    const { runId } = await mgr.startNew({ preset: 'test', env: 'sokoban', seed: 1, config: { steps: 400, stepMs: 20 }, totalSteps: 400 });
    await until('running', () => mgr!.list().some((s) => s.runId === runId && s.status === 'running' && s.step > 2));
    const before = events.length;
    const info = await mgr.stop(runId);
    expect(info.detail).toMatch(/^stopping…/);
    // Emitted synchronously with the call, not after the worker's next step.
    const first = events.slice(before).find((e) => e.event === 'session.status')?.payload as ApiEventPayload<'session.status'> | undefined;
    expect(first?.detail).toMatch(/^stopping…/);
    expect(await mgr.waitFor(runId)).toBe('stopped');
    expect(statuses().at(-1)?.detail ?? '').not.toMatch(/stopping/);
  });

  it('names the kind of each non-finite value in run.metrics', async () => {
    mgr = new SessionManager({ store, emit, ...syntheticJobs(), concurrency: 1, flushMs: 50, throttleMs: 100 });
    const { runId } = await mgr.startNew({ preset: 'test', env: 'sokoban', seed: 1, config: { steps: 30 }, totalSteps: 30 });
    expect(await mgr.waitFor(runId)).toBe('completed');
    const records = events.filter((e) => e.event === 'run.metrics').flatMap((e) => (e.payload as ApiEventPayload<'run.metrics'>).records);
    expect(records.length).toBe(30);
    for (const r of records) {
      const nulls = Object.entries(r.values)
        .filter(([, v]) => v === null)
        .map(([k]) => k)
        .sort();
      expect(Object.keys(r.nonFinite ?? {}).sort()).toEqual(nulls);
      for (const kind of Object.values(r.nonFinite ?? {})) expect(['NaN', 'Infinity', '-Infinity']).toContain(kind);
    }
    // The synthetic stream logs validation keys as NaN between validations.
    expect(records.some((r) => r.nonFinite?.['val/success_rate'] === 'NaN')).toBe(true);
  });
});
