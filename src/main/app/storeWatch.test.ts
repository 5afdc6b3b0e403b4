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
import { watchStore, type StoreWatch } from './storeWatch';

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
