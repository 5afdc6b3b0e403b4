/** Waiting in tests for something another part does in its own time (a follower's poll, a store's write). */

/**
 * Polls `cond` every `everyMs` until it holds; past `ms` it throws "timed out waiting for WHAT" (WHAT says what the
 * test waited for, so a failure names the step that did not come).
 */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 8000, everyMs = 20): Promise<void> {
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
