/**
 * The host side of a training worker: spawn, message, watch for exit. Two implementations of one interface:
 * worker_threads (CLI, browser mode, tests — runs trainingWorker.ts through a tsx bootstrap when running from
 * sources, or the built trainingWorker.js next to the bundle) and Electron's utilityProcess (the desktop app
 * injects `utilityProcess` from electron; nothing here imports electron).
 */
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { HostToWorker, WorkerToHost } from './protocol';

export interface WorkerHandle {
  post(msg: HostToWorker): void;
  onMessage(cb: (msg: WorkerToHost) => void): void;
  /** Called once when the worker ends: `error` set when it crashed (uncaught exception, non-zero exit). */
  onExit(cb: (info: { code: number | null; error: string | null }) => void): void;
  terminate(): Promise<void>;
}

export type SpawnWorker = (runId: string) => WorkerHandle;

/**
 * worker_threads spawner. `entry`: a worker entry source file that calls serveJob (default: the trainer's,
 * trainingWorker.ts, or the built trainingWorker.js next to the bundle); test kits pass their own.
 */
export function threadWorkerSpawner(entry?: URL): SpawnWorker {
  const here = import.meta.url;
  const builtEntry = new URL('./trainingWorker.js', here);
  const sourceEntry = entry ?? new URL('./trainingWorker.ts', here);
  const fromSources = entry !== undefined || here.endsWith('.ts') || !existsSync(fileURLToPath(builtEntry));
  return (runId) => {
    const w = fromSources
      ? new Worker(new URL('./workerBoot.mjs', here), { workerData: { entry: sourceEntry.href }, name: `run-${runId}` })
      : new Worker(builtEntry, { name: `run-${runId}` });
    let exitCb: ((info: { code: number | null; error: string | null }) => void) | null = null;
    let crash: string | null = null;
    let ended = false;
    w.on('error', (e) => {
      crash = e instanceof Error ? e.message : String(e);
    });
    w.on('exit', (code) => {
      ended = true;
      exitCb?.({
        code,
        error: crash ?? (code !== 0 && code !== 1 ? `worker exited with code ${code}` : code === 1 ? 'worker exited with code 1' : null),
      });
    });
    return {
      post: (msg) => {
        if (!ended) w.postMessage(msg);
      },
      onMessage: (cb) => w.on('message', cb),
      onExit: (cb) => {
        exitCb = cb;
      },
      terminate: async () => {
        if (!ended) await w.terminate();
      },
    };
  };
}

/** The part of Electron's `utilityProcess` module we use (structural, so main need not import electron here). */
export interface UtilityProcessModule {
  fork(
    modulePath: string,
    args?: string[],
    options?: { serviceName?: string; stdio?: 'inherit' | 'pipe' | 'ignore' },
  ): {
    postMessage(msg: unknown): void;
    on(event: 'message', cb: (msg: unknown) => void): void;
    on(event: 'exit', cb: (code: number) => void): void;
    kill(): boolean;
  };
}

/** Electron utilityProcess spawner: `entry` is the built trainingWorker.js (out/main/trainingWorker.js). */
export function utilityProcessSpawner(utilityProcess: UtilityProcessModule, entry: string): SpawnWorker {
  return (runId) => {
    const child = utilityProcess.fork(entry, [], { serviceName: `ARLArena run ${runId}`, stdio: 'inherit' });
    let exitCb: ((info: { code: number | null; error: string | null }) => void) | null = null;
    let ended = false;
    child.on('exit', (code: number) => {
      ended = true;
      exitCb?.({ code, error: code === 0 ? null : `training process exited with code ${code}` });
    });
    return {
      post: (msg) => {
        if (!ended) child.postMessage(msg);
      },
      onMessage: (cb) => child.on('message', (m: unknown) => cb(m as WorkerToHost)),
      onExit: (cb) => {
        exitCb = cb;
      },
      terminate: async () => {
        if (!ended) child.kill();
      },
    };
  };
}
