/**
 * Training worker entry (worker_threads, or Electron utilityProcess in the desktop app; electron-vite builds
 * this file as its own input). One run per worker, the real trainer (jobs/training.ts), loaded only when the
 * start message arrives (it pulls in tfjs and onnxruntime).
 */
import { serveJob } from './workerMain';

serveJob(async () => (await import('./jobs/training')).trainingJob);
