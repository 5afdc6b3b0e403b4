/**
 * The trackers' own writers (tests/peers/trackers_peer.py in the `trackers` venv: MLflow and Trackio) logging a run
 * step by step, for the tests that follow a tracker's database while it is written.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { venvPython } from './peers';

export const TRACKERS_PEER = resolve(import.meta.dirname, '..', 'peers', 'trackers_peer.py');

export interface SlowWriter {
  readonly child: ChildProcess;
  /** Its exit code once it has logged every step. */
  readonly exited: Promise<number | null>;
  /** The database it writes: live-mlflow.db, or the Trackio project's live-trackio/arl-live.db. */
  readonly dbPath: string;
}

/**
 * `trackers_peer.py slow-write KIND`: `steps` steps, one every `seconds`, into a database in `dir` (one per kind);
 * resolves once the writer printed "started" (its first step committed), rejects when it exits before that.
 * Trackio's database appears a moment later (Trackio writes from a background thread).
 */
export async function startSlowWriter(dir: string, kind: 'mlflow' | 'trackio', steps: number, seconds: number): Promise<SlowWriter> {
  const target = join(dir, `live-${kind}${kind === 'mlflow' ? '.db' : ''}`);
  const child = spawn(venvPython('trackers'), [TRACKERS_PEER, 'slow-write', kind, target, String(steps), String(seconds)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  await new Promise<void>((res, rej) => {
    child.stdout.on('data', (d: Buffer) => {
      if (String(d).includes('started')) res();
    });
    void exited.then((code) => rej(new Error(`the writer exited (${code}) before its first step`)));
  });
  return { child, exited, dbPath: kind === 'mlflow' ? target : join(target, 'arl-live.db') };
}
