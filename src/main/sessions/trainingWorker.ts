/**
 * Training worker entry (worker_threads, or Electron utilityProcess in the desktop app; electron-vite builds
 * this file as its own input). One run per worker: waits for `start`, runs the job, reports, exits.
 * The production job is the real trainer (jobs/training.ts); `jobModule` in the start message is for tests.
 */
import { workerLink } from './transport';
import { runJob, type JobControl } from './jobRunner';
import { loadJobModule } from './job';
import type { HostToWorker } from './protocol';

const link = workerLink();
let control: JobControl | null = null;
const early: HostToWorker[] = [];

link.onMessage((msg) => {
  if (msg.type !== 'start') {
    if (control) control.handle(msg);
    else early.push(msg);
    return;
  }
  void (async () => {
    try {
      // The real trainer is loaded only when needed (it pulls in tfjs and onnxruntime).
      const job = msg.jobModule ? await loadJobModule(msg.jobModule) : (await import('./jobs/training')).trainingJob;
      await runJob({
        start: msg,
        job,
        post: (m) => link.post(m),
        onControl: (c) => {
          control = c;
          for (const m of early.splice(0)) c.handle(m);
        },
      });
    } catch (e) {
      link.post({ type: 'failed', error: e instanceof Error ? e.message : String(e) });
    }
    // Let the last messages drain, then end the worker.
    setTimeout(() => process.exit(0), 50);
  })();
});
link.post({ type: 'ready' });
