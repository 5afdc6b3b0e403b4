/**
 * An exclusive lock file shared by every process that opens one data directory (the app, CLI commands).
 *
 * The lock is a file created exclusively: its content (holder pid, host, time, nonce, the holder's start in ticks
 * since boot) is written to a temp file first and hard-linked into place, and link() fails with EEXIST when the lock
 * exists, so the lock never exists without its content. Where hard links are not supported it falls back to an
 * O_EXCL create (`wx`) + write.
 *
 * A lock is stale, and taken over, when its holder is a process on this host that is gone (kill -9, crash: the
 * pid no longer exists) or when it is older than `staleMs` (a hung holder, a reused pid, another host) — but not by
 * age while its holder is on this host and provably alive (its pid's start in ticks since boot is the one the lock
 * recorded): a slow holder (a createRun on a loaded disk) lost the lock and its half-made run folder to another
 * process's cleanup. A live holder that hangs is waited for until `timeoutMs`, which names it. Taking
 * over renames the stale file aside and checks it was the one judged stale; if another process had replaced it
 * meanwhile, the fresh lock is linked back (only a third process creating the lock in that same instant could
 * then hold it alongside: two takeovers of one stale lock racing with a new holder). Waiting is bounded: after
 * `timeoutMs`, LockTimeoutError says who holds the lock and how to clear it.
 *
 * On a full disk there is no room for the content (a temp file's first block): the lock is then created empty
 * with O_EXCL, so that the commands that free space (deleting a run) can still take it. Others judge an empty lock
 * as unreadable, stale after UNREADABLE_GRACE_MS, which a catalog change on a full disk stays well within.
 *
 * Why not proper-lockfile: it judges staleness only by an mtime its holder refreshes on a timer (at least 2 s,
 * 10 s by default), so every kill -9 during a write blocks the next process for that long, and a holder whose
 * event loop stalls past it is declared compromised and throws; it has no "holder pid is gone" test.
 */
import { bootId, pidAlive, processStartTicks, writerTag } from '../platform/process';
import { link, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import { isDiskFull } from './storageErrors';

export interface LockOptions {
  /**
   * A lock held longer than this is taken over even if its holder may be alive (hung, or its pid was reused) — unless
   * the holder is on this host and provably alive (its recorded start in ticks since boot is its pid's).
   */
  readonly staleMs?: number;
  /** Give up waiting after this long (default: staleMs + 10 s, so a stale lock is always taken over first). */
  readonly timeoutMs?: number;
}

export const DEFAULT_STALE_MS = 30_000;
/** A lock file without readable content (only the `wx` fallback can leave one) is stale after this long. */
const UNREADABLE_GRACE_MS = 5_000;

export interface LockOwner {
  pid: number;
  host: string;
  /** Epoch milliseconds when the lock was taken. */
  at: number;
  nonce: string;
  /** The holder's start in clock ticks since boot (processStartTicks; absent off Linux and in older locks). */
  start?: number;
  /** The holder's machine's boot (bootId; absent off Linux and in older locks): tells machines named alike apart. */
  boot?: string;
}

/**
 * Whether the holder runs on this machine, so this machine's pids can judge it: its host name, and its boot where the
 * lock records one. By the name alone, a holder on another machine named alike (localhost, an image's default, a
 * cloned VM) sharing the data dir over the network read as a gone process here, and its lock was taken over while
 * it wrote the catalog: two writers of runs.json.
 */
export function heldOnThisMachine(owner: Readonly<LockOwner>): boolean {
  return owner.host === hostname() && (owner.boot === undefined || owner.boot === bootId());
}

export class LockTimeoutError extends Error {
  /** The CLI prints this as one line (see LockPathError). */
  readonly expected = true;
  constructor(
    readonly lockFile: string,
    readonly holder: string,
    waitedMs: number,
    /** The holder's record (pid, host, since when), or null when the lock file is unreadable. */
    readonly owner: Readonly<LockOwner> | null = null,
  ) {
    super(
      `could not lock ${lockFile} after waiting ${(waitedMs / 1000).toFixed(1)} s: it is held by ${holder}. ` +
        `If no ARLArena app or arlarena command is using ${dirname(lockFile)}, delete ${lockFile} and retry.`,
    );
    this.name = 'LockTimeoutError';
  }
}

/** Something that is not a lock file sits where the lock belongs (a directory made by hand, a special file). */
export class LockPathError extends Error {
  /** The CLI prints this as one line (it is the user's to fix, not a bug). */
  readonly expected = true;
  constructor(
    readonly lockFile: string,
    what: string,
  ) {
    super(`${lockFile} is ${what}, not a lock file: no ARLArena process creates that; remove it (rm -r ${lockFile}) and retry`);
    this.name = 'LockPathError';
  }
}

let counter = 0;

function tempName(lockFile: string): string {
  // named by its writer (writerTag), as writeFileAtomic's: the run store's open and removeDeadTemps judge it by that
  return join(dirname(lockFile), `.${basename(lockFile)}.${writerTag()}-${threadId}-${++counter}.tmp`);
}

function parseOwner(text: string): LockOwner | null {
  try {
    const o = JSON.parse(text) as Partial<LockOwner>;
    if (Number.isInteger(o.pid) && typeof o.host === 'string' && typeof o.at === 'number' && typeof o.nonce === 'string')
      return o as LockOwner;
  } catch {
    // unreadable
  }
  return null;
}

function describeHolder(owner: LockOwner | null, mtimeMs: number, now: number): string {
  if (!owner) return `an unreadable lock written ${((now - mtimeMs) / 1000).toFixed(1)} s ago`;
  return `process ${owner.pid} on ${owner.host} since ${new Date(owner.at).toISOString()} (${((now - owner.at) / 1000).toFixed(1)} s)`;
}

/** Why the lock `text` (file modified at `mtimeMs`) may be taken over, or null while its holder may still use it. */
function staleReason(text: string, mtimeMs: number, now: number, staleMs: number): string | null {
  const owner = parseOwner(text);
  if (!owner) return now - mtimeMs > Math.min(staleMs, UNREADABLE_GRACE_MS) ? 'unreadable' : null;
  // This process's own pid included: a lock taken before this process started is a dead predecessor's that was
  // handed the same pid (pids start low again after a session's end killed every process); this process's own
  // holders took theirs after it started, and pidAlive tells the two apart by the start time.
  if (heldOnThisMachine(owner)) {
    if (!pidAlive(owner.pid, owner.at, owner.start)) return `process ${owner.pid} is gone`;
    // Provably its holder, still running: never taken over by age. Without recorded ticks (older locks, off Linux)
    // a reused pid cannot be ruled out, so the age rule stays for those, as for other hosts and unreadable locks.
    if (typeof owner.start === 'number' && processStartTicks(owner.pid) === owner.start) return null;
  }
  if (now - owner.at > staleMs) return `held for more than ${staleMs / 1000} s`;
  return null;
}

/** Create `lockFile` holding `token` if it does not exist. False when it exists. */
async function tryCreate(lockFile: string, tmp: string, token: string): Promise<boolean> {
  try {
    await link(tmp, lockFile);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw e;
  }
  // No hard links on this file system: exclusive create, then write (a reader may briefly see it empty).
  let fh;
  try {
    fh = await open(lockFile, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    await fh.writeFile(token);
  } finally {
    await fh.close();
  }
  return true;
}

/** The token of a lock taken empty on a full disk (see the header). */
const EMPTY_LOCK = '';

/** Create `lockFile` empty if it does not exist (a full disk: no room for its content). False when it exists. */
async function tryCreateEmpty(lockFile: string): Promise<boolean> {
  try {
    await (await open(lockFile, 'wx')).close();
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

/** Remove the lock if it still is the stale one we read (`seen`); a lock taken meanwhile is put back. */
async function breakStale(lockFile: string, seen: string): Promise<void> {
  const aside = tempName(lockFile);
  try {
    await rename(lockFile, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const moved = await readFile(aside, 'utf8').catch(() => '');
  if (moved !== seen) await link(aside, lockFile).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

async function readLock(lockFile: string): Promise<{ text: string; mtimeMs: number } | null> {
  try {
    const st = await stat(lockFile);
    if (!st.isFile()) throw new LockPathError(lockFile, st.isDirectory() ? 'a directory' : 'not a regular file');
    return { text: await readFile(lockFile, 'utf8'), mtimeMs: st.mtimeMs };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if ((e as NodeJS.ErrnoException).code === 'EISDIR') throw new LockPathError(lockFile, 'a directory');
    throw e;
  }
}

/** Take the lock (waiting, and taking over a stale one); resolves to the token to pass to `release`. */
export async function acquire(lockFile: string, opts: LockOptions = {}): Promise<string> {
  const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = opts.timeoutMs ?? staleMs + 10_000;
  const ticks = processStartTicks();
  const boot = bootId();
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    at: Date.now(),
    nonce: randomBytes(8).toString('hex'),
    ...(ticks !== null ? { start: ticks } : {}),
    ...(boot !== null ? { boot } : {}),
  };
  const start = Date.now();
  const tmp = tempName(lockFile);
  let delay = 2;
  try {
    for (;;) {
      owner.at = Date.now();
      const token = JSON.stringify(owner);
      let room = true;
      try {
        await writeFile(tmp, token);
      } catch (e) {
        if (!isDiskFull(e)) throw e;
        room = false;
      }
      if (room ? await tryCreate(lockFile, tmp, token) : await tryCreateEmpty(lockFile)) return room ? token : EMPTY_LOCK;
      const held = await readLock(lockFile);
      if (!held) continue;
      const now = Date.now();
      if (staleReason(held.text, held.mtimeMs, now, staleMs) !== null) {
        await breakStale(lockFile, held.text);
        continue;
      }
      if (now - start >= timeoutMs)
        throw new LockTimeoutError(lockFile, describeHolder(parseOwner(held.text), held.mtimeMs, now), now - start, parseOwner(held.text));
      // Jittered backoff: holders keep the lock for a few file writes (milliseconds).
      await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random())));
      delay = Math.min(100, delay * 1.5);
    }
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/** Release a lock taken with `acquire` (a lock that is no longer ours, taken over as stale, is left alone). */
export async function release(lockFile: string, token: string): Promise<void> {
  const text = await readFile(lockFile, 'utf8').catch(() => null);
  if (text === token) await unlink(lockFile).catch(() => undefined);
}

/** Run `fn` holding the lock. */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, opts: LockOptions = {}): Promise<T> {
  const token = await acquire(lockFile, opts);
  try {
    return await fn();
  } finally {
    await release(lockFile, token);
  }
}
