/**
 * The worker's side of the host link: worker_threads' `parentPort` (CLI, browser mode, tests) or Electron
 * utilityProcess's `process.parentPort` (the desktop app). Same messages either way.
 */
import { parentPort } from 'node:worker_threads';
import type { HostToWorker, WorkerToHost } from './protocol';

export interface WorkerLink {
  post(msg: WorkerToHost): void;
  onMessage(cb: (msg: HostToWorker) => void): void;
}

interface ElectronParentPort {
  postMessage(msg: unknown): void;
  on(event: 'message', cb: (e: { data: unknown }) => void): void;
}

export function workerLink(): WorkerLink {
  const electronPort = (process as unknown as { parentPort?: ElectronParentPort }).parentPort;
  if (electronPort) {
    return {
      post: (msg) => electronPort.postMessage(msg),
      onMessage: (cb) => electronPort.on('message', (e) => cb(e.data as HostToWorker)),
    };
  }
  if (parentPort) {
    const port = parentPort;
    return {
      post: (msg) => port.postMessage(msg),
      onMessage: (cb) => port.on('message', (m: HostToWorker) => cb(m)),
    };
  }
  throw new Error('trainingWorker: not started as a worker thread or utility process');
}
