import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
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

  // A process that died but was not reaped yet stays in /proc as a zombie, and signal 0 succeeds on it. A killed
  // orphan (the studies run as orphans: started in the background of a shell that ended) waits for pid 1 to reap it,
  // which in a container without an init never happens — its runs read as owned for good.
  it.runIf(linux)('answers false for a zombie: a process killed with SIGKILL that its parent never reaped', async () => {
    // A Python parent starts a sleep and reads its stdin: it reaps the sleep only when the read ends (the wait after
    // it), so the killed sleep stays a zombie until then, and is reaped at the end, leaving none. Not `sh -c 'sleep &
    // …; read; wait'`: a fresh-clone CI run found that zombie already gone (/proc/PID missing) once in five runs. The
    // parent gets its own process group (detached), so no signal another test file sends to the runner's group
    // reaches it and orphans the zombie to init.
    const parent = spawn(
      'python3',
      ['-c', 'import subprocess, sys\np = subprocess.Popen(["sleep", "30"])\nprint(p.pid, flush=True)\nsys.stdin.read()\np.wait()'],
      { stdio: ['pipe', 'pipe', 'ignore'], detached: true },
    );
    try {
      const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
      const pid = Number(String(line).trim());
      const since = Date.now();
      expect(pidAlive(pid, since)).toBe(true);
      process.kill(pid, 'SIGKILL');
      const t0 = Date.now();
      while (!/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')) && Date.now() - t0 < 5000)
        await new Promise((r) => setTimeout(r, 10));
      let probed = false;
      try {
        process.kill(pid, 0);
        probed = true;
      } catch {
        probed = false;
      }
      expect(probed).toBe(true);
      expect(pidAlive(pid, since)).toBe(false);
      expect(pidAlive(pid)).toBe(false);
    } finally {
      parent.stdin!.end();
      await once(parent, 'close');
    }
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
