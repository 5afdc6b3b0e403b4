/**
 * The app sees another process's writes: two RunStores on one data directory stand for the app and the CLI
 * (each process opens its own, as `arlarena train` and `arlarena serve` do).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiEventName } from '../../shared/api';
import { RunStore } from '../store/runStore';
import { FULL_LIST_EVERY, watchStore, type StoreWatch } from './storeWatch';

let dir: string;
let app: RunStore;
let cli: RunStore;
let watch: StoreWatch | null = null;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'arl-watch-'));
  app = await RunStore.open(dir, { lock: { staleMs: 60_000, timeoutMs: 5_000 } });
  cli = await RunStore.open(dir, { lock: { staleMs: 60_000, timeoutMs: 5_000 } });
});
afterEach(async () => {
  watch?.stop();
  await cli.close();
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

const base = { preset: 'sampo', env: 'sokoban', seed: 1, config: {}, totalSteps: 8 };

it('announces a run another process created, trained on and deleted, leaving out the runs this process trains', async () => {
  const events: { event: ApiEventName; payload: Record<string, unknown> }[] = [];
  const own = new Set<string>();
  watch = watchStore({
    list: () => app.listRuns(),
    emit: (event, payload) => events.push({ event, payload: payload as Record<string, unknown> }),
    own: () => own,
    intervalMs: 60_000,
  });
  await watch.poll();
  expect(events).toEqual([]);

  const r = await cli.createRun({ ...base, name: 'from the CLI', status: 'stopped' });
  await watch.poll();
  expect(events).toEqual([{ event: 'runs.changed', payload: { runId: r.id } }]);

  events.length = 0;
  // `arlarena resume` trains it: running, then step 6 of 8.
  await cli.updateRun(r.id, { status: 'running', step: 6 });
  await watch.poll();
  expect(events.map((e) => e.event)).toEqual(['session.status', 'runs.changed']);
  expect(events[0].payload).toMatchObject({ runId: r.id, status: 'running', step: 6, totalSteps: 8 });

  events.length = 0;
  await watch.poll();
  expect(events).toEqual([]);

  // A run this process trains is announced by its own session, not twice.
  own.add(r.id);
  await cli.updateRun(r.id, { step: 7 });
  await watch.poll();
  expect(events).toEqual([]);
  own.delete(r.id);

  await cli.deleteRun(r.id);
  await watch.poll();
  expect(events).toEqual([{ event: 'runs.changed', payload: { runId: r.id } }]);
});

it("compares the store's version first: an idle poll lists nothing, another process's change still shows at the next poll", async () => {
  const events: { event: ApiEventName; payload: Record<string, unknown> }[] = [];
  let lists = 0;
  watch = watchStore({
    list: () => {
      lists++;
      return app.listRuns();
    },
    version: () => app.changeVersion(),
    emit: (event, payload) => events.push({ event, payload: payload as Record<string, unknown> }),
    own: () => new Set(),
    intervalMs: 60_000,
  });
  // The first poll (started by watchStore itself) lists: it is what later polls compare with.
  await watch.poll();
  expect(lists).toBe(1);
  const r = await cli.createRun({ ...base, name: 'from the CLI', status: 'stopped' });
  await watch.poll();
  expect(lists).toBe(2);
  expect(events).toEqual([{ event: 'runs.changed', payload: { runId: r.id } }]);
  events.length = 0;
  // Idle: the version has not moved, nothing is listed (with 500 runs a list stats 500 run.json files).
  for (let i = 0; i < 5; i++) await watch.poll();
  expect(lists).toBe(2);
  expect(events).toEqual([]);
  // The app itself lists (an API runs.list): the watch still sees the CLI's next change at its next poll.
  await app.listRuns();
  await cli.updateRun(r.id, { status: 'running', step: 3 });
  await watch.poll();
  expect(lists).toBe(3);
  expect(events.map((e) => e.event)).toEqual(['session.status', 'runs.changed']);
  events.length = 0;
  // A new run folder and a deleted one move the version too.
  const s = await cli.createRun({ ...base, name: 'second', status: 'stopped' });
  await watch.poll();
  expect(events).toEqual([{ event: 'runs.changed', payload: { runId: s.id } }]);
  events.length = 0;
  await cli.deleteRun(s.id);
  await watch.poll();
  expect(events).toEqual([{ event: 'runs.changed', payload: { runId: s.id } }]);
});

it('lists every FULL_LIST_EVERY polls whatever the version says (what it cannot see: a run.json written without its catalog write)', async () => {
  let lists = 0;
  watch = watchStore({
    list: () => {
      lists++;
      return app.listRuns();
    },
    version: async () => 'never moves',
    emit: () => undefined,
    own: () => new Set(),
    intervalMs: 60_000,
  });
  await watch.poll();
  for (let i = 0; i < FULL_LIST_EVERY * 2; i++) await watch.poll();
  expect(lists).toBe(3);
});
