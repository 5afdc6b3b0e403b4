/**
 * Test helper process for secondLab.integration.test.ts: a lab as the desktop app or `arlarena serve` holds it
 * (createLab, the synthetic stand-in job, one run training at a time) with three runs: `running` training (slowly),
 * `queued` waiting behind it, and `paused`, paused before its worker ever started. Prints their ids as one JSON line,
 * then on "go" on stdin stops `running`, waits for `queued` to be trained and prints its final status and step as a
 * second JSON line; on "end" it prints `paused`'s status in this lab as a third and disposes of the lab.
 * Usage: node --import tsx queuedLab.ts <dataDir>
 */
import { createLab } from '../app/lab';
import { syntheticJobs } from './jobs/index';

const [dataDir] = process.argv.slice(2);
process.env.ARLARENA_MAX_SESSIONS = '1';
const services = createLab({
  dataDir: dataDir!,
  computeInfo: async () => ({ training: 'wasm', rollout: 'tfjs', detail: 'test', available: ['wasm'] }),
  sessions: { ...syntheticJobs(), flushMs: 50 },
});
const { sessions, store } = await services.lab();
const run = (seed: number, config: Record<string, unknown>) =>
  sessions.startNew({
    preset: 'held',
    env: 'sokoban',
    seed,
    config,
    totalSteps: Number(config.steps),
    appVersion: 'test',
    appCommit: 'test',
  });
const running = await run(1, { steps: 10_000, stepMs: 20, checkpointEvery: 50 });
const queued = await run(2, { steps: 3, stepMs: 5, checkpointEvery: 1 });
const paused = await run(3, { steps: 3, stepMs: 5, checkpointEvery: 1 });
await sessions.pause(paused.runId);
process.stdout.write(`${JSON.stringify({ running: running.runId, queued: queued.runId, paused: paused.runId })}\n`);
let input = '';
const said = (word: string): Promise<void> =>
  new Promise((resolve) => {
    const check = (): void => {
      if (!input.includes(word)) return;
      process.stdin.off('data', onData);
      resolve();
    };
    const onData = (d: Buffer): void => {
      input += String(d);
      check();
    };
    process.stdin.on('data', onData);
    check();
  });
await said('go');
await sessions.stop(running.runId);
const status = await sessions.waitFor(queued.runId);
const rec = await store.getRun(queued.runId);
process.stdout.write(`${JSON.stringify({ status, step: rec?.step })}\n`);
await said('end');
process.stdin.pause();
process.stdout.write(`${JSON.stringify({ paused: sessions.list().find((s) => s.runId === paused.runId)?.status ?? 'ended' })}\n`);
await services.dispose();
