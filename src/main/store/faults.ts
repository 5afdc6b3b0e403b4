/**
 * Fault points at the store's write boundaries, for the crash tests: half-way through a JSONL append (so the line
 * on disk is torn), after a temp file is written and before it is renamed over its target, after the rename,
 * before a checkpoint folder is renamed into place, in the middle of a prune and of a run's deletion, before a
 * cluster token's temp copy is renamed into place (remote/targets.ts), and after each chunk of a metrics export
 * (exportMetrics.ts). The product never arms them: the
 * hook is a no-op until a test's own helper process injects one (src/main/testing/killPoints.ts), so a kill lands
 * on the exact write a test names, every time, instead of wherever a timer finds the scheduler.
 */
export interface StoreFaults {
  /** Called at each write boundary with its label. */
  at(label: string): void;
  /** True when a hook is injected: appends are then written in two parts around the `jsonl-append` point. */
  readonly armed: boolean;
}

const NO_FAULTS: StoreFaults = { at: () => undefined, armed: false };
let current: StoreFaults = NO_FAULTS;

/** The hook in force in this process (a no-op unless a test helper injected one). */
export function storeFaults(): StoreFaults {
  return current;
}

/** Arm fault points for this process (test helper processes only). */
export function injectStoreFaults(faults: StoreFaults): void {
  current = faults;
}
