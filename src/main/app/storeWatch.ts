/**
 * The app sees what other processes do to its data directory: a run started, resumed, stopped or deleted with the
 * CLI (or by a second app) is announced to open pages as the app's own runs are — `runs.changed` when a run
 * appears, disappears or its record changes, `session.status` when its status or step moves — so the runs table
 * and a run's page follow `arlarena train|resume|stop` without a reload.
 *
 * Polling, not fs.watch: inotify does not see writes made over a network share, and a poll is one code path on
 * every platform. A poll first asks the store whether anything may have changed (RunStore.changeVersion: the
 * catalog's and the runs folder's versions, two stats) and lists the runs only then, or every FULL_LIST_EVERY
 * polls: listing stats every run's run.json, which with 500 runs was most of a poll's cost (docs/benchmarks.md).
 * Runs this process trains or follows are left out: their sessions announce them, with more detail.
 */
import type { ApiEventName, ApiEventPayload, RunSummary } from '../../shared/api';

/** How often the server and the desktop app look for other processes' changes. */
export const WATCH_STORE_MS = 1500;

/**
 * A full list at least every this many polls (15 s at WATCH_STORE_MS), whatever `changed` says: it finds what the
 * cheap check cannot (a writer killed between its run.json and its catalog write).
 */
export const FULL_LIST_EVERY = 10;

export interface StoreWatchOptions {
  /** The runs as the store reads them now (RunStore.listRuns: other processes' writes included). */
  readonly list: () => Promise<RunSummary[]>;
  readonly emit: <E extends ApiEventName>(event: E, payload: ApiEventPayload<E>) => void;
  /** Runs this process trains or follows (announced by their own sessions). */
  readonly own: () => ReadonlySet<string>;
  /** Poll period; default WATCH_STORE_MS. */
  readonly intervalMs?: number;
  /**
   * The version of what `list` reads (RunStore.changeVersion): a poll that finds the version of its last list
   * lists again only every FULL_LIST_EVERY polls. Without it every poll lists.
   */
  readonly version?: () => Promise<string>;
}

export interface StoreWatch {
  /** One poll now (tests; the timer calls it too). Resolves when its events are sent. */
  poll(): Promise<void>;
  stop(): void;
}

type Seen = Pick<RunSummary, 'status' | 'step' | 'totalSteps' | 'updatedAt' | 'etaSeconds'>;

export function watchStore(opts: StoreWatchOptions): StoreWatch {
  let seen: Map<string, Seen> | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  let sinceList = 0;
  /** The store's version when this watch last listed (taken before the list: a change during it lists again). */
  let listedVersion: string | null = null;

  const once = async (): Promise<void> => {
    let runs: RunSummary[];
    try {
      const version = opts.version ? await opts.version() : null;
      if (seen !== null && version !== null && version === listedVersion && sinceList + 1 < FULL_LIST_EVERY) {
        sinceList++;
        return;
      }
      sinceList = 0;
      runs = await opts.list();
      listedVersion = version;
    } catch {
      // The store is busy or the folder is briefly unreadable (another process repairing it): next poll.
      return;
    }
    const now = new Map<string, Seen>(
      runs.map((r) => [
        r.id,
        { status: r.status, step: r.step, totalSteps: r.totalSteps, updatedAt: r.updatedAt, etaSeconds: r.etaSeconds },
      ]),
    );
    const before = seen;
    seen = now;
    if (before === null || stopped) return;
    const own = opts.own();
    for (const r of runs) {
      if (own.has(r.id)) continue;
      const was = before.get(r.id);
      if (!was) {
        opts.emit('runs.changed', { runId: r.id });
        continue;
      }
      if (was.updatedAt === r.updatedAt && was.status === r.status && was.step === r.step) continue;
      if (was.status !== r.status || was.step !== r.step || was.totalSteps !== r.totalSteps) {
        opts.emit('session.status', {
          runId: r.id,
          status: r.status,
          step: r.step,
          totalSteps: r.totalSteps,
          etaSeconds: r.etaSeconds ?? null,
          elapsedSeconds: 0,
          error: null,
          phase: null,
          detail: null,
        });
      }
      opts.emit('runs.changed', { runId: r.id });
    }
    for (const id of before.keys()) if (!now.has(id) && !own.has(id)) opts.emit('runs.changed', { runId: id });
  };

  const poll = (): Promise<void> => (running ??= once().finally(() => (running = null)));
  const timer = setInterval(() => void poll(), opts.intervalMs ?? WATCH_STORE_MS);
  // The watch never keeps the process alive on its own (the server and the window do).
  timer.unref?.();
  void poll();
  return {
    poll,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
