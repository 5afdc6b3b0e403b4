/**
 * Test helper process for crash.test.ts: writes to a run store in a tight loop until it is killed
 * (creates runs, appends metrics and trajectories, updates records and alerts, saves checkpoints, flushes).
 * Usage: node --import tsx crashWriter.ts <dataDir> <seed>
 */
import { RunStore } from '../store/runStore';

const [dataDir, seedArg] = process.argv.slice(2);
const seed = Number(seedArg);
const store = await RunStore.open(dataDir);
let runId = (await store.listRuns())[0]?.id;
if (!runId || seed % 3 === 0)
  runId = (
    await store.createRun({
      preset: 'crash',
      env: 'sokoban',
      seed,
      totalSteps: 1_000_000,
      config: { seed },
      appVersion: 'test',
      appCommit: 'test',
    })
  ).id;
const start = (await store.readMetrics(runId)).at(-1)?.step ?? 0;
process.stdout.write('ready\n');
for (let step = start + 1; ; step++) {
  await store.appendMetrics(runId, [
    {
      step,
      values: { 'actor/grad_norm': step % 7 === 0 ? NaN : step / 10, 'episode/success_rate': (step % 100) / 100, 'perf/wall_s': step },
    },
  ]);
  if (step % 3 === 0)
    await store.appendTrajectories(runId, [
      {
        step,
        split: 'train',
        env: 'sokoban',
        taskId: String(step),
        uid: 'u',
        trajUid: `t${step}`,
        won: false,
        episodeReturn: 0,
        turns: [],
      },
    ]);
  if (step % 5 === 0) await store.updateRun(runId, { status: 'running', name: `run at step ${step}`, tags: [`s${step % 4}`] });
  if (step % 11 === 0) {
    await store.upsertAlerts(runId, [
      {
        id: `a${step}`,
        runId,
        rule: 'non_finite',
        severity: 'warning',
        metric: 'actor/grad_norm',
        firstStep: step,
        lastStep: step,
        message: 'm',
        hint: 'h',
        evidence: { steps: [step], values: [null] },
        acknowledged: false,
      },
    ]);
  }
  if (step % 17 === 0)
    await store.saveCheckpoint(runId, { step, files: { 'w.bin': new Uint8Array(4096).fill(step % 256) }, meta: { step } });
  if (step % 13 === 0) await store.flush(runId);
}
