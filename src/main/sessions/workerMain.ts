/**
 * The body of a training worker: wait for `start`, run the job its entry file names, report, exit. The product's
 * entry (trainingWorker.ts) runs the real trainer; a test entry runs a stand-in job the same way, so the worker
 * never loads code a message names.
 */
import { workerLink } from './transport';
import { runJob, type JobControl } from './jobRunner';
import type { TrainingJob } from './job';
import type { HostToWorker } from './protocol';

export function serveJob(loadJob: () => Promise<TrainingJob>): void {
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
        await runJob({
          start: msg,
          job: await loadJob(),
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
}
