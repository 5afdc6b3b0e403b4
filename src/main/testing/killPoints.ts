/**
 * Test helper processes: a store fault hook (src/main/store/faults.ts) that SIGKILLs this process at the N-th
 * write boundary (optionally counting only one label), so no clean-up runs and the data directory is left exactly
 * as a crash at that write would leave it.
 */
import { injectStoreFaults } from '../store/faults';

export function armKillPoint(killAt: number, onlyLabel = ''): void {
  if (!Number.isInteger(killAt) || killAt < 1) throw new Error(`kill point must be an integer ≥ 1, got ${killAt}`);
  let seen = 0;
  injectStoreFaults({
    armed: true,
    at(label) {
      if (onlyLabel !== '' && label !== onlyLabel) return;
      seen += 1;
      if (seen === killAt) process.kill(process.pid, 'SIGKILL');
    },
  });
}
