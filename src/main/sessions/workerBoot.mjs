// Bootstrap for running trainingWorker.ts from sources (CLI via tsx, tests): registers tsx in this worker
// thread (tsx's registration in the parent does not carry over to workers), then loads the entry.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
