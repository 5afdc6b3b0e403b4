/**
 * Test support for handler tests: a real store and session manager (the synthetic job) in a temporary data
 * directory, with the given handlers behind the real router (input and output checked against the contract).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEventBus } from '../events';
import { createRouter } from '../router';
import type { MainServices } from '../../services';
import type { CallContext } from '../types';
import { getLab } from '../../sessions/lab';

const JOB = fileURLToPath(new URL('../../sessions/testJobs/synthetic.ts', import.meta.url));

export interface HandlerTestLab {
  readonly dir: string;
  readonly services: MainServices;
  /** One API call through the router; the reply is the typed Result, loosely typed for assertions. */
  call(method: string, input?: unknown): Promise<any>;
  close(): Promise<void>;
}

export async function openHandlerTestLab(
  prefix: string,
  handlers: (services: MainServices) => Record<string, unknown>,
  ctx: CallContext = { transport: 'browser', publishDownload: null },
): Promise<HandlerTestLab> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const disposers: Array<() => Promise<void> | void> = [];
  const services: MainServices = {
    dataDir: dir,
    bus: createEventBus(),
    computeInfo: async () => ({ training: 'wasm', rollout: 'tfjs', detail: 'test', available: ['wasm'] }),
    electronAvailable: () => false,
    onDispose: (s) => void disposers.push(s),
    dispose: async () => {
      for (const d of disposers.reverse()) await d();
    },
  };
  await getLab(services, { jobModule: JOB, flushMs: 50 });
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
