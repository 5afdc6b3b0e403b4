/**
 * The lab's main-side services for one data directory: the run store and the session manager, created once
 * per `MainServices` (desktop app or browser mode). At start-up, runs a dead process left running are marked
 * interrupted. Call `initLab(services)` when the app starts (handlers also call `getLab` lazily).
 *
 * Concurrency: ARLARENA_MAX_SESSIONS (runs training at once), default half the cores (1 on 2 cores).
 */
import type { MainServices } from '../services';
import { RunStore } from '../store/runStore';
import { SessionManager, type SessionManagerOptions } from './sessionManager';

export interface Lab {
  readonly store: RunStore;
  readonly sessions: SessionManager;
  /** Runs marked interrupted at start-up. */
  readonly recovered: readonly string[];
  /** Problems found opening the store (corrupt files moved aside). */
  readonly warnings: readonly string[];
}

const labs = new WeakMap<MainServices, Promise<Lab>>();

export function getLab(services: MainServices, options: Partial<SessionManagerOptions> = {}): Promise<Lab> {
  let lab = labs.get(services);
  if (!lab) {
    lab = (async () => {
      const store = await RunStore.open(services.dataDir);
      for (const w of store.warnings) console.warn(`[store] ${w}`);
      const envMax = Number(process.env.ARLARENA_MAX_SESSIONS);
      const sessions = new SessionManager({
        store,
        emit: (event, payload) => services.bus.emit(event, payload),
        concurrency: Number.isInteger(envMax) && envMax > 0 ? envMax : undefined,
        // A run tagged for a Ray cluster (sessions.start with `on`, or a run trained `--on` that is resumed here)
        // trains there, through the same target the CLI's train --on uses; the Ray client loads only then.
        spawnForRun: async (tags) => {
          if (!tags.some((t) => t.startsWith('ray-url:') || t.startsWith('ray:'))) return undefined;
          const { targetOfRun } = await import('../remote/computeTarget');
          return (await targetOfRun(services.dataDir, tags)).spawn;
        },
        ...options,
      });
      const recovered = await sessions.recover();
      services.onDispose(async () => {
        await sessions.dispose();
        await store.close();
      });
      return { store, sessions, recovered, warnings: store.warnings };
    })();
    labs.set(services, lab);
  }
  return lab;
}

export const initLab = getLab;
