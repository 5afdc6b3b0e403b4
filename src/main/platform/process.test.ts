import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pidAlive } from './process';

const linux = existsSync('/proc/self/task');

describe('pidAlive', () => {
  it('answers true for this process and false for one that exited', async () => {
    expect(pidAlive(process.pid)).toBe(true);
    const child = spawn(process.execPath, ['-e', '0']);
    const pid = child.pid!;
    await once(child, 'exit');
    expect(pidAlive(pid)).toBe(false);
  });

  // Signal 0 sent to a thread id succeeds on Linux: a dead owner's pid handed to a thread of another process
  // read as alive, and a study refused to resume its own run (RunStore.ownedElsewhere).
  it.runIf(linux)('answers false for a thread id, which a signal probe alone takes for a live process', () => {
    const tids = readdirSync('/proc/self/task')
      .map(Number)
      .filter((t) => t !== process.pid);
    expect(tids.length).toBeGreaterThan(0); // node always runs libuv and V8 worker threads
    let probed = false;
    try {
      process.kill(tids[0]!, 0);
      probed = true;
    } catch {
      probed = false;
    }
    expect(probed).toBe(true);
    expect(pidAlive(tids[0]!)).toBe(false);
  });

  it.runIf(linux)('answers false for a live process that started after the owner recorded itself', async () => {
    const before = Date.now() - 60_000;
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    try {
      await once(child, 'spawn');
      const pid = child.pid!;
      expect(pidAlive(pid)).toBe(true);
      expect(pidAlive(pid, Date.now() + 1000)).toBe(true);
      expect(pidAlive(pid, new Date(before).toISOString())).toBe(false);
      expect(pidAlive(pid, before)).toBe(false);
    } finally {
      child.kill();
    }
  });
});
