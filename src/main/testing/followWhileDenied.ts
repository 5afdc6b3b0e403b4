/**
 * Test helper process (followDenied.integration.test.ts), run as an unprivileged user so that `chmod 000` denies
 * it: follows argv[3] into a run store in argv[2], prints `{"steps":N}` each time the stored step count changes,
 * and on `stop` from stdin stops the follow and prints `{"done":{status, error, steps}}`.
 */
import { RunStore } from '../store/runStore';
import { LogFollower } from '../imports/follow';

const [dataDir, path, goneMs] = process.argv.slice(2);
const store = await RunStore.open(dataDir);
const f = await LogFollower.start(store, path, { pollMs: 40, goneMs: Number(goneMs) });
let last = -1;
const timer = setInterval(() => {
  void store.readMetrics(f.runId).then((r) => {
    if (r.length !== last) {
      last = r.length;
      process.stdout.write(`${JSON.stringify({ steps: last })}\n`);
    }
  });
}, 50);
const finish = async () => {
  clearInterval(timer);
  const info = await f.stop();
  const rec = await store.getRun(f.runId);
  process.stdout.write(
    `${JSON.stringify({ done: { status: info.status, error: rec?.error ?? null, steps: (await store.readMetrics(f.runId)).length } })}\n`,
  );
  await store.close();
  process.exit(0);
};
void f.done.then(() => finish());
process.stdin.on('data', (d) => {
  if (String(d).includes('stop')) void finish();
});
