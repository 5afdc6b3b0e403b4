/**
 * Test support for handler tests: a real store and session manager (the synthetic job) in a temporary data
 * directory, with the given handlers behind the real router (input and output checked against the contract).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRouter } from '../api/router';
import { createLab, type LabServices } from '../app/lab';
import type { CallContext } from '../api/types';
import type { ApiEventPayload } from '../../shared/api';

import { syntheticJobs } from './jobs/index';

export interface HandlerTestLab {
  readonly dir: string;
  readonly services: LabServices;
  /** One API call through the router; the reply is the typed Result, loosely typed for assertions. */
  call(method: string, input?: unknown): Promise<any>;
  close(): Promise<void>;
}

export async function openHandlerTestLab(
  prefix: string,
  handlers: (services: LabServices) => Record<string, unknown>,
  ctx: CallContext = { transport: 'browser', publishDownload: null },
): Promise<HandlerTestLab> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const services = createLab({
    dataDir: dir,
    insideElectron: false,
    computeInfo: async () => ({ training: 'wasm', rollout: 'tfjs', detail: 'test', available: ['wasm'] }),
    sessions: { ...syntheticJobs(), flushMs: 50 },
  });
  await services.lab();
  const router = createRouter(handlers(services) as never, { validateOutput: true, onInternalError: (m, e) => console.error(m, e) });
  return {
    dir,
    services,
    call: (method, input) => router.call(method, input, ctx),
    close: async () => {
      await services.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** What the lab publishes live, as a window would receive it: run.metrics, run.alert and session.status, in order. */
export interface LiveEvents {
  readonly metrics: ApiEventPayload<'run.metrics'>[];
  readonly alerts: ApiEventPayload<'run.alert'>[];
  readonly statuses: ApiEventPayload<'session.status'>[];
}

/** Collects the lab's live events from now on (for as long as the lab is open). */
export function liveEvents(lab: HandlerTestLab): LiveEvents {
  const events: LiveEvents = { metrics: [], alerts: [], statuses: [] };
  lab.services.bus.subscribe('run.metrics', (p) => events.metrics.push(p));
  lab.services.bus.subscribe('run.alert', (p) => events.alerts.push(p));
  lab.services.bus.subscribe('session.status', (p) => events.statuses.push(p));
  return events;
}
