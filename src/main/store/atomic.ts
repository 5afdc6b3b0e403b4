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
import { pidAlive, WRITER_TAG, writerState, writerTag } from '../platform/process';

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
  const tmp = join(dir, `.${basename(file)}.${writerTag()}-${threadId}-${++counter}.tmp`);
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
 * Whether a hidden temp's writer is gone, by what its name says of it (`rest`: the name after `.NAME.`, or after
 * `NAME.` for the `NAME.<writer>.tmp` form), or null when the name names no writer this host can judge:
 * - `p<pid>s<start>h<host>[-<thread>-<n>].tmp` (writerTag, since 2026-12-05): gone unless that pid's process started
 *   at that start in ticks since boot — exact whatever the temp's age and the wall clock; null for another host's;
 * - `<pid>[-<thread>-<n>].tmp`, written by older versions: gone once a process holding the pid started after the
 *   temp's last change (pids are handed out again after a session's end; a forward step of the clock can make a live
 *   writer read as gone, the reason the start went into the name).
 */
function writerGone(rest: string, changedMs: number): boolean | null {
  const tagged = new RegExp(`^${WRITER_TAG}(?:-\\d+-\\d+)?\\.tmp$`).exec(rest);
  if (tagged) {
    const state = writerState(tagged[1]!, tagged[2], tagged[3]!, changedMs);
    return state === 'elsewhere' ? null : state === 'gone';
  }
  const old = /^(\d+)(?:-\d+-\d+)?\.tmp$/.exec(rest);
  return old ? !pidAlive(Number(old[1]), changedMs) : null;
}

/** The writer part of a hidden temp's name: `.ledger.jsonl.p12s34h0a1b2c3d-0-1.tmp` -> `p12s34h0a1b2c3d-0-1.tmp`. */
function writerPart(name: string): string | null {
  const m = new RegExp(`\\.((?:${WRITER_TAG}|\\d+)(?:-\\d+-\\d+)?\\.tmp)$`).exec(name);
  return m ? m[1]! : null;
}

/**
 * How long a temp whose writer this machine cannot judge (writerState 'elsewhere': another machine, or this one
 * before a reboot, whose writers are all gone) stays unchanged before it is removed where no shorter age rule
 * applies. Left for good, a token copy a `remote add` killed before a reboot kept the token in clear.
 */
export const OTHER_MACHINE_MS = 86_400_000;

/**
 * Remove the temp files that writes of `file` left when a kill stopped them before their rename — writeFileAtomic's
 * `.NAME.<writer>-<thread>-<n>.tmp` and `NAME.<writer>.tmp` (a streamed bundle, a secret) — once their writer is
 * gone (writerGone); another machine's once unchanged for OTHER_MACHINE_MS. Nothing else is touched: the folder may
 * be the user's.
 */
export async function removeDeadTemps(file: string): Promise<void> {
  const dir = dirname(file);
  const base = basename(file);
  const tagged = new RegExp(`^${WRITER_TAG}(?:-\\d+-\\d+)?\\.tmp$`);
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    const rest = n.startsWith(`.${base}.`) ? n.slice(base.length + 2) : n.startsWith(`${base}.`) ? n.slice(base.length + 1) : null;
    if (rest === null) continue;
    const st = await stat(join(dir, n)).catch(() => null);
    if (!st?.isFile()) continue;
    const gone = writerGone(rest, st.mtimeMs) ?? (tagged.test(rest) && Date.now() - st.mtimeMs > OTHER_MACHINE_MS);
    if (gone) await rm(join(dir, n), { force: true });
  }
}

/**
 * Remove the hidden temps (`.….tmp`, files or folders) in `dir` that killed writers left: one whose name names its
 * writer once that writer is gone (writerGone), however old; one that names none, or another host's writer, once
 * older than `minAgeMs`. `oldNamesByAge`: judge the pid-only names of older versions by age too, as this folder's
 * cleanup always did (the run store's folders); else by writerGone's rule for them (by this host's pids).
 */
export async function removeDeadTempsIn(dir: string, minAgeMs = 60_000, oldNamesByAge = false): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const now = Date.now();
  for (const name of names) {
    if (!name.startsWith('.') || !name.endsWith('.tmp')) continue;
    const p = join(dir, name);
    const st = await stat(p).catch(() => null);
    if (!st) continue;
    const part = writerPart(name);
    const tagged = part !== null && part.startsWith('p');
    const byWriter = part !== null && (tagged || !oldNamesByAge) ? writerGone(part, st.mtimeMs) : null;
    const dead = byWriter ?? now - st.mtimeMs > minAgeMs;
    if (dead) await rm(p, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The run store's cleanup at every open (the data dir, each run's folder and its checkpoints): the temps and
 * checkpoint temp folders killed writers left. A name carrying its writer (writerTag) is judged by that writer alone,
 * so a live write of any length keeps its temp (by age, a checkpoint written for more than a minute — a large model,
 * a loaded disk — was removed under it by the app or a CLI command opening the store, and its rename failed) and a
 * killed one's goes at once. Names written by older versions carry no start (`<pid>…`) or no pid, and may be a live
 * older process's: they are judged by age, as those versions did; so is another host's writer.
 */
export async function cleanStaleTemps(dir: string, minAgeMs = 60_000): Promise<void> {
  await removeDeadTempsIn(dir, minAgeMs, true);
}
