/**
 * One process at a time runs a named study: `arlarena ladder --study NAME` (its run, `--resume` and
 * `--export-ledger`) and `arlarena arena --study NAME` (and `--resume`). Nothing stopped two before — a study
 * restarted twice by a script, a resume typed while the first still ran — and both then trained the same unfinished
 * runs and appended to the same ledger and study files.
 *
 * The lock is the data dir's lock machinery (store/fileLock.ts: content linked into place, so it never exists
 * empty; a dead holder's lock renamed aside and taken over) under its own file, `<data dir>/studies/.ladder-NAME.lock`
 * or `.arena-NAME.lock`, with two differences: a study holds it for hours, so age never makes it stale, and a second
 * process does not wait for it but is refused at once, with the holder's pid, since when, and the fix. A holder that
 * is gone — killed with its session, crashed, a zombie, or a pid handed out again to a process started after the lock
 * (platform/process.ts pidAlive with the lock's time) — is taken over at once by the next process. A holder on another
 * host (a data dir shared over the network) cannot be judged from here: the message says which file to delete.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDeadTemps } from '../../store/atomic';
import { LockTimeoutError, acquire, heldOnThisMachine, release, type LockOwner } from '../../store/fileLock';
import { studiesDir } from './studyFiles';

/** Which command's study: a ladder's levels are studies NAME-p<level>, an arena study is NAME itself. */
export type StudyKind = 'ladder' | 'arena';

export function studyLockFile(dataDir: string, kind: StudyKind, name: string): string {
  // A dot first: study folders start with a letter or digit (checkStudyName), so no study is named so.
  return join(studiesDir(dataDir), `.${kind}-${name}.lock`);
}

/** Another process runs the study: printed as one line (exit code 1), it is the user's to resolve. */
export class StudyBusyError extends Error {
  readonly expected = true;
  constructor(
    readonly kind: StudyKind,
    readonly study: string,
    readonly lockFile: string,
    readonly holder: Readonly<LockOwner> | null,
    now: number,
  ) {
    const what = kind === 'ladder' ? `ladder "${study}"` : `study "${study}"`;
    const harm =
      kind === 'ladder'
        ? 'a second process would train the same unfinished runs and append to the same ledger'
        : "a second process would train the same unfinished runs and write the same study's files";
    const since = (h: LockOwner) => `since ${new Date(h.at).toISOString()} (${((now - h.at) / 60_000).toFixed(1)} min)`;
    super(
      holder === null
        ? `${what} is locked by ${lockFile}, which is unreadable (a process killed while taking it, or written by hand); ` +
            `run this again in a few seconds, or delete it if no arlarena command runs ${what}`
        : !heldOnThisMachine(holder)
          ? `${what} is running in process ${holder.pid} on host ${holder.host} ${since(holder)} (this data dir is shared): ${harm}. ` +
            `Fix: wait for it to end, or if no process on ${holder.host} runs it any more, delete ${lockFile} and run this again`
          : `${what} is running in process ${holder.pid} ${since(holder)}: ${harm}. Fix: wait for it to end, or stop it ` +
            `(kill ${holder.pid}) and run this again: the lock of a process that is gone is taken over at once (${lockFile})`,
    );
    this.name = 'StudyBusyError';
  }
}

/**
 * Take study `name`'s lock for this process, or throw StudyBusyError naming the live holder. Resolves to the release
 * (call it when the command ends; a process that is killed first leaves the lock to be taken over).
 */
export async function lockStudy(dataDir: string, kind: StudyKind, name: string): Promise<() => Promise<void>> {
  const file = studyLockFile(dataDir, kind, name);
  await mkdir(studiesDir(dataDir), { recursive: true });
  // The lock's content is written to `.NAME.<pid>-<thread>-<n>.tmp` and linked into place; a process killed between
  // the two left that temp beside the lock (nothing else in studies/ cleans it).
  await removeDeadTemps(file);
  let token: string;
  try {
    token = await acquire(file, { staleMs: Number.POSITIVE_INFINITY, timeoutMs: 0 });
  } catch (e) {
    if (e instanceof LockTimeoutError) throw new StudyBusyError(kind, name, file, e.owner, Date.now());
    throw e;
  }
  return () => release(file, token);
}
