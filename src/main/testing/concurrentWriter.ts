/**
 * Test helper process for concurrency.test.ts: one of two processes (think: the app and a CLI command) that
 * open the same data directory and update its catalog and one shared run at the same time.
 * Usage: node concurrentWriter.mjs <dataDir> <who> <iterations> <sharedRunId>
 * Prints "ready" once the store is open, waits for "go" on stdin (so both processes start together), then per
 * iteration k: creates run <who>-<k>, adds tag <who>-<k> to the shared run, raises alert <who>-<k> on it and
 * acknowledges it, renames and completes its previous run, and now and then lists the runs. Prints "done".
 */
import { RunStore } from '../store/runStore';

const [dataDir, who, itersArg, shared] = process.argv.slice(2);
const iterations = Number(itersArg);
const store = await RunStore.open(dataDir);
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  let buf = '';
  process.stdin.on('data', (d) => {
    buf += String(d);
    if (buf.includes('go')) resolve();
  });
});
process.stdin.pause();

for (let k = 0; k < iterations; k++) {
  const mine = `${who}-${k}`;
  await store.createRun({
    id: mine,
    preset: 'conc',
    env: 'sokoban',
    seed: k,
    totalSteps: 10,
    config: { k },
    appVersion: 'test',
    appCommit: 'test',
  });
  await store.updateRun(shared, (r) => ({ tags: [...r.tags, mine] }));
  await store.upsertAlerts(shared, [
    {
      id: mine,
      runId: shared,
      rule: 'non_finite',
      severity: 'warning',
      metric: 'actor/grad_norm',
      firstStep: k,
      lastStep: k,
      message: 'm',
      hint: 'h',
      evidence: { steps: [k], values: [null] },
      acknowledged: false,
    },
  ]);
  await store.updateRun(shared, (r) => ({ alerts: r.alerts.map((a) => (a.id === mine ? { ...a, acknowledged: true } : a)) }));
  if (k > 0) await store.updateRun(`${who}-${k - 1}`, { name: `renamed ${who}-${k - 1}`, status: 'completed' });
  if (k % 4 === 0) await store.listRuns();
}
await store.close();
process.stdout.write('done\n');
