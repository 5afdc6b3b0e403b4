/**
 * The main-side services, constructed in one place for both transports: the Electron main process
 * (src/main/index.ts) and browser mode (`arlarena serve`, src/main/server). Whatever a handler needs lives here.
 *
 * Adding a service (run store, session manager, …): construct it in `createMainServices`, add its field to
 * `MainServices`, and register its shutdown with `onDispose` so the database is flushed on exit.
 */
import { mkdirSync } from 'node:fs';
import type { ComputeBackendInfo } from '../shared/api';
import { createEventBus, type EventBus } from './api/events';
import { detectComputeBackend } from './api/computeDetect';
import { findElectronBinary } from './electron/binary';

export interface MainServices {
  /** Where runs, checkpoints and bundles live (same default for the CLI, browser mode and the desktop app). */
  readonly dataDir: string;
  /** Live events for `subscribe` (both transports). */
  readonly bus: EventBus;
  /** The compute backend training and rollouts use on this machine (shown in the about panel). */
  computeInfo(): Promise<ComputeBackendInfo>;
  /** Whether an Electron binary is present (true inside the desktop app). */
  electronAvailable(): boolean;
  /** Register a shutdown step (flush stores, stop workers); they run in reverse order. */
  onDispose(step: () => void | Promise<void>): void;
  dispose(): Promise<void>;
}

export interface ServicesOptions {
  readonly dataDir: string;
  /** Set by the Electron main process; browser mode looks for the binary instead. */
  readonly insideElectron?: boolean;
  /** Event payload checks (default: on unless NODE_ENV=production). */
  readonly validateEvents?: boolean;
}

export async function createMainServices(options: ServicesOptions): Promise<MainServices> {
  mkdirSync(options.dataDir, { recursive: true });
  const bus = createEventBus({ validate: options.validateEvents });
  const disposers: Array<() => void | Promise<void>> = [];
  let computeCache: Promise<ComputeBackendInfo> | null = null;
  let disposed = false;

  const services: MainServices = {
    dataDir: options.dataDir,
    bus,
    computeInfo() {
      // The real selection (src/main/compute, loads tfjs: a few seconds, once); the static probe if that fails.
      computeCache ??= import('./compute/index')
        .then(({ setupCompute }) => setupCompute({}))
        .then((setup) => ({ ...setup.info }))
        .catch((e: unknown) => {
          const probe = detectComputeBackend();
          return { ...probe, detail: `${probe.detail} (backend set-up failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)})` };
        });
      return computeCache;
    },
    electronAvailable: () => options.insideElectron === true || findElectronBinary().available,
    onDispose(step) {
      disposers.push(step);
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      for (const step of disposers.reverse()) {
        try {
          await step();
        } catch (e) {
          console.error('[services] shutdown step failed:', e);
        }
      }
      bus.close();
    },
  };
  return services;
}
