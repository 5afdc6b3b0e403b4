/**
 * Deterministic kill points for the crash soak (killSoak.test.ts); inert unless a test sets the variables.
 *
 *   ARLARENA_TEST_KILL_AT=N        the process kills itself (SIGKILL, no clean-up runs) at the N-th kill point
 *   ARLARENA_TEST_KILL_POINT=label only points with this label count (default: every point)
 *
 * The store calls `testKillPoint(label)` at each write boundary: half-way through a JSONL append (so the line
 * on disk is torn), after a temp file is written and before it is renamed over its target, after the rename,
 * before a checkpoint folder is renamed into place and in the middle of a prune. A timer-based kill lands
 * wherever the scheduler happens to be; these land on the exact moment the soak names, every time.
 */
const killAt = Number(process.env.ARLARENA_TEST_KILL_AT ?? '');
const onlyLabel = process.env.ARLARENA_TEST_KILL_POINT ?? '';
let seen = 0;

/** True when a kill point is armed in this process (writers then split appends so a kill can tear a line). */
export const killPointsArmed = Number.isInteger(killAt) && killAt > 0;

export function testKillPoint(label: string): void {
  if (!killPointsArmed) return;
  if (onlyLabel !== '' && label !== onlyLabel) return;
  seen += 1;
  if (seen === killAt) process.kill(process.pid, 'SIGKILL');
}
