import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Linux's USER_HZ, the unit of /proc/<pid>/stat's start time: fixed at 100 by the kernel ABI on every
 * architecture Node supports (proc(5), "starttime"), whatever the kernel's internal tick rate.
 */
const USER_HZ = 100;
/** Clock skew allowed between a lock's "since" and the kernel's record of its holder's start. */
const START_SLACK_MS = 2000;

let bootMs: number | null | undefined;
/** Boot time in epoch ms from /proc/stat's btime, or null off Linux. */
function bootTimeMs(): number | null {
  if (bootMs !== undefined) return bootMs;
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
    bootMs = m ? Number(m[1]) * 1000 : null;
  } catch {
    bootMs = null;
  }
  return bootMs;
}

/**
 * What /proc says of `pid`: absent (or dead, not yet reaped), a thread of another process, or a process started at
 * `ticks` (clock ticks since boot, /proc/<pid>/stat starttime), i.e. at `startMs` of the wall clock as it reads now.
 */
function procInfo(pid: number): 'absent' | 'thread' | { startMs: number | null; ticks: number | null } | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // No /proc at all (macOS, Windows), or this pid's entry hidden: say nothing and let the signal probe decide. A /proc
    // mounted with hidepid=invisible (a shared server's hardening) hides other users' processes, ENOENT like a gone
    // one's, while signal 0 still answers EPERM for them: read as absent, another user's live lab on a shared data
    // dir lost its temps, and its runs and lock read as a dead process's. A pid that is truly gone fails the probe.
    return null;
  }
  // Linux answers signal 0 sent to a thread id too, so a dead owner's pid reused by a thread of some other
  // process looked alive: a ladder refused to resume its own run for that (2026-12-05).
  const tgid = /^Tgid:\s+(\d+)$/m.exec(status);
  if (tgid && Number(tgid[1]) !== pid) return 'thread';
  // A zombie (Z) or dying (X) process has ended: it only waits for its parent to reap it, and signal 0 still succeeds
  // on it. An orphan's parent is pid 1, and where that is no init (a container whose pid 1 is a shell or the app) it
  // never reaps: a killed study stayed a zombie and its runs read as owned for good. (The lab's machines' pid 1 reaps
  // orphans about every 2 s.)
  if (/^State:\s+[ZX]/m.test(status)) return 'absent';
  const boot = bootTimeMs();
  const ticks = startTicksOf(pid);
  return { startMs: boot !== null && ticks !== null ? boot + (ticks * 1000) / USER_HZ : null, ticks };
}

/** /proc/<pid>/stat's starttime: clock ticks from boot to the process's start; null where /proc cannot say. */
function startTicksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name (which may hold spaces and parentheses): state is field 3, starttime 22
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3]);
    return Number.isInteger(ticks) ? ticks : null;
  } catch {
    return null;
  }
}

/**
 * When process `pid` (default: this one) started, in clock ticks since boot (Linux; null elsewhere): with its pid,
 * the process's identity. A record of it (a run's owner file, the catalog lock) lets pidAlive tell its process from
 * a later one handed the same pid whatever the wall clock did meanwhile — a start in wall-clock time moves with
 * every step of the clock (an NTP correction; a VM's clock set forward after its host slept, as WSL2 does), the
 * ticks do not.
 */
export function processStartTicks(pid: number = process.pid): number | null {
  return startTicksOf(pid);
}

/**
 * Whether a process id on this machine is alive: signal 0 probes it; EPERM means alive but someone else's. On
 * Linux, /proc also rules out what a probe cannot: a thread id, and a new process that was handed the dead owner's
 * pid — one whose start is not `startTicks` (processStartTicks, recorded by the owner), or, where the owner recorded
 * only `since` (the wall-clock time it recorded itself: a file's last change), one that started after that moment.
 * The wall-clock test takes a live owner for dead after a forward step of the clock larger than its slack; the
 * ticks are exact.
 */
export function pidAlive(pid: number, since?: number | string | Date, startTicks?: number | null): boolean {
  const info = procInfo(pid);
  if (info === 'absent' || info === 'thread') return false;
  if (info && info.ticks !== null && typeof startTicks === 'number') {
    if (info.ticks !== startTicks) return false;
  } else if (info && info.startMs !== null && since !== undefined) {
    const sinceMs = since instanceof Date ? since.getTime() : typeof since === 'string' ? Date.parse(since) : since;
    if (Number.isFinite(sinceMs) && info.startMs > sinceMs + START_SLACK_MS) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let ownTag: string | undefined;
/**
 * This process as a temp file or folder's name carries it: `p<pid>s<start>h<host>`, start being processStartTicks
 * (absent off Linux, where /proc cannot say) and host hostTagOf this machine's host name and boot — the identity a
 * run's owner file and a lock record, in a name. The cleanups (store/atomic.ts, the log import's staging, a metrics
 * export's partials) judge a name with it by writerState, exactly, whatever its age and whatever the wall clock did:
 * by age, a live write slower than the limit (a large checkpoint on a loaded disk) lost its temp under it and a dead
 * one younger than it stayed until later. The host keeps this machine's pids from judging another machine's writer
 * (a data dir shared over the network, or bind-mounted into containers with their own host names). Two containers
 * running at once on one kernel with one host name (`docker run --network host` gives each the machine's), each with
 * its own pids, are not told apart: from one the other's processes cannot be seen, as a dead session's cannot.
 */
export function writerTag(): string {
  if (ownTag === undefined) {
    const start = processStartTicks();
    ownTag = `p${process.pid}${start !== null ? `s${start}` : ''}h${hostTag()}`;
  }
  return ownTag;
}

/** This boot of this machine's kernel (/proc/sys/kernel/random/boot_id, a random UUID made at boot), or null off Linux. */
export function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/**
 * writerTag's host part: the first 8 hex digits of the SHA-256 of the host name and, on Linux, the kernel's boot id.
 * The host name alone is not the machine: two machines named alike (`localhost`, an image's default, a cloned VM)
 * writing one data dir over the network judged each other's temps by their own pids, and removed a live writer's
 * temp under it as 'gone'. The boot id tells them apart, and a temp left before a reboot from a later process that
 * happens to have the same pid and start in ticks (those count from boot); both are then judged by age. The
 * sessions of a container on one kernel, each a fresh pid namespace, share the boot and stay judged exactly.
 */
export function hostTagOf(name: string, boot: string | null): string {
  return createHash('sha256')
    .update(boot !== null ? `${name}\n${boot}` : name)
    .digest('hex')
    .slice(0, 8);
}

let ownHost: string | undefined;
function hostTag(): string {
  ownHost ??= hostTagOf(hostname(), bootId());
  return ownHost;
}

/** writerTag's form inside a name, as a RegExp source: groups 1 the pid, 2 the start (absent off Linux), 3 the host. */
export const WRITER_TAG = 'p(\\d+)(?:s(\\d+))?h([0-9a-f]{8})';

/**
 * What can be said here of the writer a writerTag names (its groups as WRITER_TAG matched them; `changedMs`: the
 * name's last change, used only where no start is recorded): alive, gone (no process of that pid started at that
 * start: killed, or the pid handed out again), or of another host, which this host's pids cannot judge.
 */
export function writerState(pid: string, start: string | undefined, host: string, changedMs: number): 'alive' | 'gone' | 'elsewhere' {
  if (host !== hostTag()) return 'elsewhere';
  return pidAlive(Number(pid), changedMs, start !== undefined ? Number(start) : null) ? 'alive' : 'gone';
}
