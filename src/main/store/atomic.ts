/**
 * Crash-safe file writes for the run database.
 *
 * Why not steno (lowdb's writer) as is: it writes a temp file and renames it, but never fsyncs, so after a power
 * loss the renamed file may be empty; and its temp name is fixed per target, so two processes (the app and a CLI
 * `train`) could interleave on the same temp file. Here: a unique temp name, fsync of the data, rename, fsync of
 * the directory (POSIX; a no-op where directories cannot be opened).
 */
import { open, rename, unlink, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { storeFaults } from './faults';
import { pidAlive } from '../platform/process';

let counter = 0;

export async function fsyncDir(dir: string): Promise<void> {
  let fh;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    // Windows cannot open directories; rename there is already durable enough for our purposes.
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** Write `data` to `file` so that a reader sees either the old or the new content, never a mix. */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const dir = dirname(file);
  const tmp = join(dir, `.${basename(file)}.${process.pid}-${threadId}-${++counter}.tmp`);
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  storeFaults().at('atomic-before-rename');
  try {
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  storeFaults().at('atomic-after-rename');
  await fsyncDir(dir);
}

/**
 * Remove the temp files that writes of `file` left when a kill stopped them before their rename — writeFileAtomic's
 * `.NAME.<pid>-<thread>-<n>.tmp` and `NAME.<pid>.tmp` (a streamed bundle, a secret) — once their writer is gone: a
 * process holding the pid that started after the temp's last change is not its writer (pids are handed out again
 * after a session's end). Nothing else is touched: the folder may be the user's.
 */
export async function removeDeadTemps(file: string): Promise<void> {
  const dir = dirname(file);
  const base = basename(file);
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    const m = n.startsWith(`.${base}.`)
      ? /^(\d+)-\d+-\d+\.tmp$/.exec(n.slice(base.length + 2))
      : n.startsWith(`${base}.`)
        ? /^(\d+)\.tmp$/.exec(n.slice(base.length + 1))
        : null;
    if (!m) continue;
    const st = await stat(join(dir, n)).catch(() => null);
    if (st?.isFile() && !pidAlive(Number(m[1]), st.mtimeMs)) await rm(join(dir, n), { force: true });
  }
}

/**
 * Remove the hidden temp files (`.….tmp`) in `dir` that killed writers left: one whose name carries its writer's pid
 * — writeFileAtomic's `.NAME.<pid>-<thread>-<n>.tmp`, `.NAME.<pid>.tmp` — once that writer is gone, judged as
 * removeDeadTemps judges (a process holding the pid that started after the temp's last change is not its writer),
 * however old the temp; one without a pid once older than `minAgeMs`. By age alone (cleanStaleTemps) a stalled live
 * write's temp, unchanged for a minute, was removed under it. For the report and study folders, whose temps are all
 * writeFileAtomic's; a folder shared with another host is judged by this host's pids.
 */
export async function removeDeadTempsIn(dir: string, minAgeMs = 60_000): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = Date.now();
  for (const name of names) {
    if (!name.startsWith('.') || !name.endsWith('.tmp')) continue;
    const p = join(dir, name);
    const st = await stat(p).catch(() => null);
    if (!st) continue;
    const pid = /\.(\d+)(?:-\d+-\d+)?\.tmp$/.exec(name);
    const dead = pid ? !pidAlive(Number(pid[1]), st.mtimeMs) : now - st.mtimeMs > minAgeMs;
    if (dead) await rm(p, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Remove temp files (and checkpoint temp folders) left by killed writers (older than `minAgeMs`, so a live writer's file is never touched). */
export async function cleanStaleTemps(dir: string, minAgeMs = 60_000): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    if (!name.startsWith('.') || !name.endsWith('.tmp')) continue;
    const p = join(dir, name);
    try {
      const s = await stat(p);
      if (now - s.mtimeMs > minAgeMs) await rm(p, { recursive: true, force: true });
    } catch {
      // raced with another cleaner; fine
    }
  }
}
