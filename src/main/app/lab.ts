/**
 * The composition root: `createLab(options)` builds, for one data directory, every service the adapters (API
 * handlers, browser-mode server, Electron main process) use, and nothing else constructs them. The run store and
 * the session manager open on first use (at start-up the adapters ask for them, so runs a dead process left
 * running are marked interrupted early); follows of growing logs are created with them and stopped at shutdown.
 *
 * Concurrency: ARLARENA_MAX_SESSIONS (runs training at once), default half the cores (1 on 2 cores).
 * Adding a service: construct it here, add its field to `LabServices`, register its shutdown with `onDispose`.
 */
import { mkdirSync } from 'node:fs';
import type { ComputeBackendInfo } from '../../shared/api';
import { detectComputeBackend } from '../compute/detect';
import { findElectronBinary } from '../platform/electronBinary';
import { RunStore } from '../store/runStore';
import { SessionManager, type SessionManagerOptions } from '../sessions/sessionManager';
import { FollowManager } from '../imports/followManager';
import { createEventBus, type EventBus } from './events';
import { watchStore } from './storeWatch';

/** The run store and session manager of one data directory. */
export interface Lab {
  readonly store: RunStore;
  readonly sessions: SessionManager;
  /** Runs marked interrupted at start-up. */
  readonly recovered: readonly string[];
  /** Problems found opening the store (corrupt files moved aside). */
  readonly warnings: readonly string[];
}

export interface LabServices {
  /** Where runs, checkpoints and bundles live (same default for the CLI, browser mode and the desktop app). */
  readonly dataDir: string;
  /** Live events for `subscribe` (both transports). */
  readonly bus: EventBus;
  /** The run store and session manager, opened once on first use. */
  lab(): Promise<Lab>;
  /** Live follows of growing logs (created with the lab; every follow stops at shutdown). */
  follows(): Promise<FollowManager>;
  /** The compute backend training and rollouts use on this machine (shown in the about panel). */
  computeInfo(): Promise<ComputeBackendInfo>;
  /** Whether an Electron binary is present (true inside the desktop app). */
  electronAvailable(): boolean;
  /** Register a shutdown step (flush stores, stop workers); they run in reverse order. */
  onDispose(step: () => void | Promise<void>): void;
  dispose(): Promise<void>;
}

export interface LabOptions {
  readonly dataDir: string;
  /** Set by the Electron main process; browser mode looks for the binary instead. */
  readonly insideElectron?: boolean;
  /** Event payload checks (default: on unless NODE_ENV=production). */
  readonly validateEvents?: boolean;
  /**
   * Announce what other processes (the CLI, a second app) do to the data directory to open pages, polling the
   * store every this many ms (app/storeWatch.ts). Off by default (a test's lab sees only what it does); the
   * browser-mode server and the desktop app turn it on.
   */
  readonly watchStoreMs?: number;
  /** Session manager settings: the desktop app's utilityProcess spawner; test kits' stand-in job and tick. */
  readonly sessions?: Partial<Omit<SessionManagerOptions, 'store' | 'emit'>>;
  /** The compute backend report (default: set up the real backend once, the static probe if that fails). */
  readonly computeInfo?: () => Promise<ComputeBackendInfo>;
}

export function createLab(options: LabOptions): LabServices {
  mkdirSync(options.dataDir, { recursive: true });
  const bus = createEventBus({ validate: options.validateEvents });
  const disposers: Array<() => void | Promise<void>> = [];
  const onDispose = (step: () => void | Promise<void>): void => void disposers.push(step);
  let computeCache: Promise<ComputeBackendInfo> | null = null;
  let labOnce: Promise<Lab> | null = null;
  let followsOnce: Promise<FollowManager> | null = null;
  let followManager: FollowManager | null = null;
  let disposed = false;

  const lab = (): Promise<Lab> =>
    (labOnce ??= (async () => {
      const store = await RunStore.open(options.dataDir);
      for (const w of store.warnings) console.warn(`[store] ${w}`);
      const envMax = Number(process.env.ARLARENA_MAX_SESSIONS);
      const sessions = new SessionManager({
        store,
        emit: (event, payload) => bus.emit(event, payload),
        concurrency: Number.isInteger(envMax) && envMax > 0 ? envMax : undefined,
        // A run tagged for a Ray cluster (sessions.start with `on`, or a run trained `--on` that is resumed here)
        // trains there, through the same target the CLI's train --on uses; the Ray client loads only then.
        spawnForRun: async (tags) => {
          if (!tags.some((t) => t.startsWith('ray-url:') || t.startsWith('ray:'))) return undefined;
          const { targetOfRun } = await import('../remote/computeTarget');
          return (await targetOfRun(options.dataDir, tags)).spawn;
        },
        ...options.sessions,
      });
      const recovered = await sessions.recover();
      const watchMs = options.watchStoreMs ?? 0;
      if (watchMs > 0) {
        const watch = watchStore({
          list: () => store.listRuns(),
          version: () => store.changeVersion(),
          emit: (event, payload) => bus.emit(event, payload),
          // Runs this process trains or trained (finished ones too: their own session announced the end) and follows.
          own: () => new Set([...sessions.runIds(), ...(followManager?.list().map((f) => f.runId) ?? [])]),
          intervalMs: watchMs,
        });
        onDispose(() => watch.stop());
      }
      onDispose(async () => {
        await sessions.dispose();
        await store.close();
      });
      return { store, sessions, recovered, warnings: store.warnings };
    })());

  return {
    dataDir: options.dataDir,
    bus,
    lab,
    follows: () =>
      (followsOnce ??= (async () => {
        const { store } = await lab();
        const fm = new FollowManager(store, (event, payload) => bus.emit(event, payload));
        followManager = fm;
        onDispose(() => fm.dispose());
        return fm;
      })()),
    computeInfo() {
      // The real selection (src/main/compute, loads tfjs: a few seconds, once); the static probe if that fails.
      computeCache ??=
        options.computeInfo?.() ??
        import('../compute/index')
          .then(({ setupCompute }) => setupCompute({}))
          .then((setup) => ({ ...setup.info }))
          .catch((e: unknown) => {
            const probe = detectComputeBackend();
            return {
              ...probe,
              detail: `${probe.detail} (backend set-up failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)})`,
            };
          });
      return computeCache;
    },
    electronAvailable: () => options.insideElectron === true || findElectronBinary().available,
    onDispose,
    async dispose() {
      if (disposed) return;
      disposed = true;
      for (const step of disposers.reverse()) {
        try {
          await step();
        } catch (e) {
          console.error('[lab] shutdown step failed:', e);
        }
      }
      bus.close();
    },
  };
}
